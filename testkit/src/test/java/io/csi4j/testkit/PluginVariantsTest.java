package io.csi4j.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.testkit.reference.Options;
import io.csi4j.testkit.reference.ReferencePlugin;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Capabilities drive the plan: what a plugin does not advertise is NOT APPLICABLE, never passed, never failed. */
class PluginVariantsTest {

    private static Map<String, TestResult> byName(SanityReport report) {
        return report.results().stream().collect(Collectors.toMap(TestResult::name, Function.identity()));
    }

    @Test
    void aBarePluginIsHeldOnlyToWhatItAdvertises(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.start(dir, Options.bare(), Set.of())) {
            StringBuilder log = new StringBuilder();
            SanityReport report = ReferencePluginConformanceTest.run(ReferencePluginConformanceTest.config(plugin, AccessType.MOUNT).build(), log);
            assertEquals(0, report.failed(), log::toString);
            Map<String, TestResult> results = byName(report);
            assertEquals(Outcome.PASSED, results.get("Lifecycle/volume/data written to a published volume is there after unpublish and publish").outcome(), log::toString);
            assertEquals(Outcome.PASSED, results.get("Controller/CreateVolume/repeated identical requests return the same volume").outcome());
            for (String name : Set.of("Controller/CreateSnapshot/cuts a snapshot of a volume", "Node/NodeStageVolume/stages a volume and repeated identical calls answer OK",
                    "Controller/ControllerPublishVolume/a volume that does not exist fails with NOT_FOUND", "Controller/ListVolumes/pages cover every entry exactly once for max_entries 1..5",
                    "Lifecycle/expansion/an expanded volume reports the new size and keeps its data", "GroupController/CreateVolumeGroupSnapshot/snapshots several volumes together")) {
                TestResult r = results.get(name);
                assertEquals(Outcome.NOT_APPLICABLE, r.outcome(), name);
                assertTrue(r.message().startsWith("needs "), r.message());
            }
            TestResult snapshot = results.get("Controller/CreateSnapshot/cuts a snapshot of a volume");
            assertEquals("needs controller capability CREATE_DELETE_SNAPSHOT", snapshot.message(), "only what is missing is named");
            report.results().stream().filter(r -> r.name().startsWith("VolumeGroup/") || r.name().startsWith("Addons/"))
                    .forEach(r -> assertTrue(r.outcome() == Outcome.NOT_APPLICABLE && r.message().contains("an addons endpoint"), r::toString));
            assertTrue(report.notApplicable() > 70, () -> report.notApplicable() + " not applicable");
            assertEquals(report.results().size(), report.passed() + report.notApplicable());
            assertEquals("", plugin.leftovers(), log::toString);
        }
    }

    @Test
    void aPluginThatRefusesGroupSnapshotsOfVolumesInUseMayDoSo(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.start(dir, Options.full().withGroupSnapshotsOnlyUnpublished(), Set.of())) {
            StringBuilder log = new StringBuilder();
            SanityReport report = ReferencePluginConformanceTest.run(
                    ReferencePluginConformanceTest.config(plugin, AccessType.MOUNT).focus("^(GroupController|Lifecycle/group)").build(), log);
            assertEquals(0, report.failed(), log::toString);
            assertEquals(Outcome.PASSED, byName(report).get("Lifecycle/group snapshot/each member of a group snapshot restores its own data").outcome(), log::toString);
            assertEquals("", plugin.leftovers(), log::toString);
        }
    }

    @Test
    void aGroupThatKeepsItsVolumesIsHeldToThatCapability(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.start(dir, Options.full().withDoNotAllowGroupToDeleteVolumes(), Set.of())) {
            StringBuilder log = new StringBuilder();
            SanityReport report = ReferencePluginConformanceTest.run(
                    ReferencePluginConformanceTest.config(plugin, AccessType.MOUNT).focus("^(VolumeGroup|Addons)/").build(), log);
            assertEquals(0, report.failed(), log::toString);
            Map<String, TestResult> results = byName(report);
            assertEquals(Outcome.PASSED, results.get("VolumeGroup/DeleteVolumeGroup/a group with volumes is refused with FAILED_PRECONDITION").outcome(), log::toString);
            assertEquals(Outcome.NOT_APPLICABLE, results.get("VolumeGroup/DeleteVolumeGroup/deletes the volumes of the group with it").outcome());
            assertTrue(report.results().stream().allMatch(r -> r.name().startsWith("VolumeGroup/") || r.name().startsWith("Addons/")));
            assertEquals("", plugin.leftovers(), log::toString);
        }
    }
}
