package io.csi4j.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.testkit.reference.Flaw;
import io.csi4j.testkit.reference.Options;
import io.csi4j.testkit.reference.ReferencePlugin;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The self-contained jar as a user runs it, {@code java -jar target/csi4j-testkit.jar ...} with nothing else on
 * the class path, against the reference plugin: the whole suite passes, and a plugin that exits mid-run gives
 * exit code 3. Runs after {@code package} (failsafe), where the jar exists.
 */
class SelfContainedJarIT {

    static SanityMainTest.Run jar(String... args) throws Exception {
        Path jar = Path.of(System.getProperty("csi4j.testkit.jar", "target/csi4j-testkit.jar"));
        assertTrue(Files.isRegularFile(jar), jar + " is not built");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", jar.toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(300, TimeUnit.SECONDS));
        return new SanityMainTest.Run(process.exitValue(), output.lines().toList());
    }

    @Test
    void theJarPassesTheReferencePlugin(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.start(Files.createDirectories(dir.resolve("plugin")), Options.full(), Set.of())) {
            Path junit = dir.resolve("sanity.xml");
            SanityMainTest.Run run = jar("--endpoint", plugin.endpoint(), "--addons-endpoint", plugin.addonsEndpoint().orElseThrow(),
                    "--volume-size", "1Mi", "--mutable-params", "reference.csi4j.io/iops=100", "--call-timeout", "20s",
                    "--staging-dir", dir.resolve("staging").toString(), "--target-dir", dir.resolve("target").toString(),
                    "--junit", junit.toString());
            assertEquals(SanityMain.PASSED, run.exit(), () -> String.join("\n", run.lines()));
            assertTrue(run.lines().getLast().matches("[1-9]\\d+ passed, 0 failed, 0 not run, \\d+ not applicable"), run.lines().getLast());
            assertEquals("0", SanityMainTest.xml(junit).getDocumentElement().getAttribute("failures"));
            assertEquals("", plugin.leftovers());
        }
    }

    @Test
    void theJarExitsWithThreeWhenThePluginStopsAnswering(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.start(Files.createDirectories(dir.resolve("plugin")), Options.full().withoutAddons(),
                Set.of(Flaw.EXITS_ON_NEGATIVE_MAX_ENTRIES))) {
            SanityMainTest.Run run = jar("--endpoint", plugin.endpoint(), "--volume-size", "1Mi", "--call-timeout", "3s",
                    "--staging-dir", dir.resolve("staging").toString(), "--target-dir", dir.resolve("target").toString());
            assertEquals(SanityMain.PLUGIN_STOPPED, run.exit(), () -> String.join("\n", run.lines()));
            assertEquals(1, run.lines().stream().filter(l -> l.startsWith("GONE the plugin stopped answering in Controller/ListSnapshots/")).count());
            assertTrue(run.lines().getLast().matches("\\d+ passed, 1 failed, [1-9]\\d+ not run, \\d+ not applicable"), run.lines().getLast());
        }
    }
}
