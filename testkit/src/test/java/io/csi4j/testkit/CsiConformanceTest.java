package io.csi4j.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.csi4j.testkit.reference.Flaw;
import io.csi4j.testkit.reference.Options;
import io.csi4j.testkit.reference.ReferencePlugin;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

/** The suite as another project's JUnit tests: failures fail, NOT_APPLICABLE aborts, passes pass. */
class CsiConformanceTest {
    static volatile SanityConfig config;

    /** What a driver author writes in their own build (run here through the JUnit engine test kit). */
    static class DriverBuild {
        @TestFactory
        Stream<DynamicNode> csiConformance() {
            org.junit.jupiter.api.Assumptions.assumeTrue(config != null, "run by CsiConformanceTest, not on its own");
            return CsiConformance.tests(config);
        }
    }

    private static EngineExecutionResults runDriverBuild() {
        return EngineTestKit.engine("junit-jupiter").selectors(selectClass(DriverBuild.class)).execute();
    }

    private static String message(Event e) {
        return e.getPayload(org.junit.platform.engine.TestExecutionResult.class)
                .flatMap(org.junit.platform.engine.TestExecutionResult::getThrowable).map(Throwable::getMessage).orElse("");
    }

    @Test
    void failuresFailAndNotApplicableAborts(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.start(dir, Options.full().withoutAddons(), Set.of(Flaw.DELETE_MISSING_VOLUME_NOT_FOUND))) {
            config = ReferencePluginConformanceTest.config(plugin, AccessType.MOUNT)
                    .focus("^(Identity/|Controller/DeleteVolume/|VolumeGroup/CreateVolumeGroup/creates an empty group)").build();
            long selected = SanityRunner.plan(config).size();
            var tests = runDriverBuild().testEvents();
            assertEquals(selected, tests.started().count());
            assertEquals(2, tests.failed().count());
            assertEquals(1, tests.aborted().count());
            assertEquals(selected - 3, tests.succeeded().count());
            List<String> failures = tests.failed().stream().map(CsiConformanceTest::message).toList();
            assertTrue(failures.stream().allMatch(m -> m.startsWith("spec: DeleteVolume")), failures::toString);
            String aborted = tests.aborted().stream().map(CsiConformanceTest::message).findFirst().orElseThrow();
            assertTrue(aborted.contains("not applicable: needs an addons endpoint"), aborted);
            var containers = runDriverBuild().containerEvents().started().stream().map(e -> e.getTestDescriptor().getDisplayName()).toList();
            assertTrue(containers.containsAll(List.of("Identity", "Controller", "VolumeGroup")), containers::toString);
        }
    }

    @Test
    void anUnreachablePluginFailsEveryTest(@TempDir Path dir) {
        config = SanityConfig.builder("unix://" + dir.resolve("absent.sock")).callTimeout(Duration.ofSeconds(1)).focus("^Identity/").build();
        var tests = runDriverBuild().testEvents();
        assertTrue(tests.started().count() > 0);
        assertEquals(tests.started().count(), tests.failed().count());
        assertTrue(tests.failed().stream().map(CsiConformanceTest::message).allMatch(m -> m.startsWith(SanityRunner.SETUP_TEST)));
    }

    @Test
    void aPluginThatStopsAnsweringAbortsTheTestsAfterIt(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.start(dir, Options.full().withoutAddons(), Set.of(Flaw.EXITS_ON_NEGATIVE_MAX_ENTRIES))) {
            config = ReferencePluginConformanceTest.config(plugin, AccessType.MOUNT).callTimeout(Duration.ofSeconds(3))
                    .focus("^(Controller/ListSnapshots/|Lifecycle/volume/)").build();
            var tests = runDriverBuild().testEvents();
            assertEquals(1, tests.failed().count());
            String failure = tests.failed().stream().map(CsiConformanceTest::message).findFirst().orElseThrow();
            assertTrue(failure.contains("\nGONE the plugin stopped answering in Controller/ListSnapshots/a negative max_entries"), failure);
            String aborted = tests.aborted().stream().map(CsiConformanceTest::message).findFirst().orElseThrow();
            assertTrue(aborted.startsWith("not run: the plugin stopped answering in Controller/ListSnapshots/"), aborted);
        } finally {
            config = null;
        }
    }
}
