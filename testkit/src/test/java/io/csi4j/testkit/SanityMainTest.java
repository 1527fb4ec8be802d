package io.csi4j.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.testkit.reference.Flaw;
import io.csi4j.testkit.reference.Options;
import io.csi4j.testkit.reference.ReferencePlugin;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

/** The entry point the command line wraps: exit codes, printed lines, the JUnit file, focus and endpoints. */
class SanityMainTest {

    record Run(int exit, List<String> lines) {}

    static Run main(SanityConfig config, Path junit) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int exit = SanityMain.run(config, junit, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return new Run(exit, bytes.toString(StandardCharsets.UTF_8).lines().toList());
    }

    static Document xml(Path file) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
    }

    @Test
    void anUnreachablePluginFailsTheRunQuickly(@TempDir Path dir) throws Exception {
        Path junit = dir.resolve("sanity.xml");
        SanityConfig config = SanityConfig.builder("unix://" + dir.resolve("nobody-listens.sock")).callTimeout(Duration.ofSeconds(1)).build();
        long start = System.nanoTime();
        Run run = main(config, junit);
        assertTrue(System.nanoTime() - start < 10_000_000_000L, "the run must not hang");
        assertEquals(1, run.exit());
        assertTrue(run.lines().stream().anyMatch(l -> l.startsWith("FAIL " + SanityRunner.SETUP_TEST)), run.lines()::toString);
        assertEquals("0 passed, 1 failed, 0 not run, 0 not applicable", run.lines().getLast());
        assertEquals("1", xml(junit).getDocumentElement().getAttribute("failures"));
    }

    @Test
    void focusSelectsTestsByName(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.start(Files.createDirectories(dir.resolve("plugin")), Options.full(), Set.of())) {
            Path junit = dir.resolve("identity.xml");
            Run run = main(ReferencePluginConformanceTest.config(plugin, AccessType.MOUNT).focus("^Identity/").build(), junit);
            long identityTests = SanityRunner.testNames().stream().filter(n -> n.startsWith("Identity/")).count();
            assertEquals(0, run.exit(), run.lines()::toString);
            assertEquals(identityTests + " passed, 0 failed, 0 not run, 0 not applicable", run.lines().getLast());
            assertEquals(identityTests, run.lines().stream().filter(l -> l.startsWith("PASS Identity/")).count());
            assertEquals(Long.toString(identityTests), xml(junit).getDocumentElement().getAttribute("tests"));
        }
    }

    @Test
    void aFailureMakesTheExitCodeNonZero(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.start(dir, Options.full(), Set.of(Flaw.DELETE_MISSING_VOLUME_NOT_FOUND))) {
            Run run = main(ReferencePluginConformanceTest.config(plugin, AccessType.MOUNT).focus("^Controller/DeleteVolume/").build(), null);
            assertEquals(1, run.exit(), run.lines()::toString);
            assertTrue(run.lines().stream().anyMatch(l -> l.startsWith("     spec: DeleteVolume MUST reply OK for a volume that does not exist; got NOT_FOUND")),
                    run.lines()::toString);
            assertEquals("3 passed, 2 failed, 0 not run, 0 not applicable", run.lines().getLast());
        }
    }

    @Test
    void speaksTcpToo(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.startTcp(dir, Options.full().withoutAddons())) {
            assertTrue(plugin.endpoint().startsWith("tcp://127.0.0.1:"));
            Run run = main(ReferencePluginConformanceTest.config(plugin, AccessType.MOUNT).focus("^(Identity/|Node/NodeGetInfo/|Controller/CreateVolume/repeated)").build(), null);
            assertEquals(0, run.exit(), run.lines()::toString);
            assertTrue(run.lines().getLast().matches("[1-9][0-9]* passed, 0 failed, 0 not run, 0 not applicable"), run.lines().getLast());
        }
    }

    @Test
    void aBareSocketPathIsAnEndpoint(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.start(dir, Options.full().withoutAddons(), Set.of())) {
            String bare = plugin.endpoint().substring("unix://".length());
            Run run = main(SanityConfig.builder(bare).focus("^Identity/Probe/").build(), null);
            assertEquals(0, run.exit(), run.lines()::toString);
        }
    }

    /** {@code java -cp ... io.csi4j.testkit.SanityMain ...} in a child JVM, as {@code java -jar csi4j-testkit.jar} runs it. */
    static Run child(String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), SanityMain.class.getName()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(120, java.util.concurrent.TimeUnit.SECONDS));
        return new Run(process.exitValue(), output.lines().toList());
    }

    @Test
    void theMainClassRunsInAChildJvm(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.start(Files.createDirectories(dir.resolve("plugin")), Options.full(), Set.of())) {
            Path junit = dir.resolve("child.xml");
            Run run = child("--endpoint", plugin.endpoint(), "--addons-endpoint=" + plugin.addonsEndpoint().orElseThrow(),
                    "--focus", "^(Identity|Addons)/", "--call-timeout", "20s", "--volume-size", "1Mi", "--junit", junit.toString());
            long selected = SanityRunner.testNames().stream().filter(n -> n.startsWith("Identity/") || n.startsWith("Addons/")).count();
            assertEquals(0, run.exit(), run.lines()::toString);
            assertEquals(selected + " passed, 0 failed, 0 not run, 0 not applicable", run.lines().getLast(), run.lines()::toString);
            assertEquals(Long.toString(selected), xml(junit).getDocumentElement().getAttribute("tests"));
        }
    }

    @Test
    void theMainClassExitsWithThreeWhenThePluginStopsAnswering(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.start(Files.createDirectories(dir.resolve("plugin")), Options.full().withoutAddons(),
                Set.of(Flaw.EXITS_ON_NEGATIVE_MAX_ENTRIES))) {
            Run run = child("--endpoint", plugin.endpoint(), "--focus", "^(Controller/ListSnapshots|Lifecycle/volume)/", "--timeout", "3",
                    "--volume-size", "1Mi", "--staging-dir", dir.resolve("staging").toString(), "--target-dir", dir.resolve("target").toString());
            assertEquals(SanityMain.PLUGIN_STOPPED, run.exit(), run.lines()::toString);
            assertEquals(1, run.lines().stream().filter(l -> l.startsWith("GONE ")).count(), run.lines()::toString);
            assertTrue(run.lines().getLast().matches("\\d+ passed, 1 failed, 1 not run, 0 not applicable"), run.lines()::toString);
        }
    }

    @Test
    void theMainClassRefusesABadCommandLine() throws Exception {
        Run run = child("--endpoint", "unix:///nowhere.sock", "--call-timeout", "soon");
        assertEquals(SanityMain.NOT_RUN_AT_ALL, run.exit(), run.lines()::toString);
        assertTrue(run.lines().getFirst().startsWith("csi4j-testkit: not a duration: 'soon'"), run.lines()::toString);
        Run help = child("--help");
        assertEquals(0, help.exit());
        assertTrue(help.lines().getFirst().startsWith("Usage: java -jar csi4j-testkit.jar --endpoint URL"), help.lines()::toString);
        Run list = child("--list");
        assertEquals(SanityRunner.testNames(), list.lines());
    }
}
