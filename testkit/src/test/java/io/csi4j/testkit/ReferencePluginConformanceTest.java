package io.csi4j.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.testkit.reference.Options;
import io.csi4j.testkit.reference.ReferencePlugin;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The suite passes a correct plugin: every test passes or is not applicable, and nothing is left behind. */
class ReferencePluginConformanceTest {

    static SanityConfig.Builder config(ReferencePlugin plugin, AccessType access) {
        SanityConfig.Builder b = SanityConfig.builder(plugin.endpoint())
                .volumeSize(1 << 20)
                .accessType(access)
                .idempotencyRepeats(2)
                .mutableParams(Map.of("reference.csi4j.io/iops", "100"))
                .secrets(Map.of("reference-secret", "s3cr3t-reference-value"))
                .callTimeout(java.time.Duration.ofSeconds(20));
        plugin.addonsEndpoint().ifPresent(b::addonsEndpoint);
        return b;
    }

    static SanityReport run(SanityConfig config, StringBuilder log) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        SanityReport report = new SanityRunner(config, new PrintStream(bytes, true, StandardCharsets.UTF_8)).run();
        log.append(bytes.toString(StandardCharsets.UTF_8));
        return report;
    }

    @ParameterizedTest
    @EnumSource(AccessType.class)
    void passesTheCorrectPlugin(AccessType access, @TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.start(dir, Options.full(), Set.of())) {
            StringBuilder log = new StringBuilder();
            SanityReport report = run(config(plugin, access).build(), log);
            if (Boolean.getBoolean("sanity.print")) System.out.println(log);
            assertEquals(0, report.failed(), () -> "failures against the correct plugin:\n" + log);
            assertTrue(report.passed() > 100, () -> "too few tests passed:\n" + log);
            // only what the reference plugin does not offer is not applicable
            Set<String> notApplicable = report.results().stream().filter(r -> r.outcome() == Outcome.NOT_APPLICABLE)
                    .map(TestResult::name).collect(Collectors.toSet());
            Set<String> expected = SanityRunner.testNames().stream()
                    .filter(n -> n.contains("DO_NOT_ALLOW") || n.contains("a group with volumes is refused")
                            // it serves SnapshotMetadata: the tests for a plugin without it do not apply
                            || n.contains("without SNAPSHOT_METADATA_SERVICE"))
                    .collect(Collectors.toSet());
            assertEquals(expected, notApplicable, () -> log.toString());
            assertEquals("", plugin.leftovers(), () -> "the suite left objects behind:\n" + log);
            assertTrue(log.toString().strip().endsWith(report.summary()), log::toString);
        }
    }
}
