package io.csi4j.testkit.suite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SuiteTest {
    static final Set<String> GROUPS = Set.of("Identity", "Controller", "Node", "GroupController", "SnapshotMetadata", "Addons", "VolumeGroup", "Lifecycle");

    @Test
    void namesAreUniqueAndShaped() {
        List<SanityTest> all = Suite.all();
        Set<String> seen = new HashSet<>();
        for (SanityTest t : all) {
            assertTrue(seen.add(t.name()), () -> "duplicate name " + t.name());
            assertTrue(t.name().split("/").length >= 3, () -> "name without service/rpc/behaviour: " + t.name());
            assertTrue(GROUPS.contains(t.group()), () -> "unknown group " + t.group());
            assertTrue(t.name().getBytes().length < 200, () -> "name too long for a report: " + t.name());
        }
        assertTrue(all.size() > 150, "the suite shrank: " + all.size());
    }

    @Test
    void everyRpcHasItsRequiredFieldsChecked() {
        Set<String> missing = new HashSet<>();
        for (SanityTest t : Suite.all()) {
            if (t.name().contains("/missing ")) missing.add(t.name().substring(0, t.name().indexOf("/missing ")));
        }
        for (String rpc : List.of("Controller/CreateVolume", "Controller/DeleteVolume", "Controller/ControllerPublishVolume",
                "Controller/ControllerUnpublishVolume", "Controller/ValidateVolumeCapabilities", "Controller/ControllerGetVolume",
                "Controller/ControllerModifyVolume", "Controller/ControllerExpandVolume", "Controller/CreateSnapshot",
                "Controller/DeleteSnapshot", "Controller/GetSnapshot", "Node/NodeStageVolume", "Node/NodeUnstageVolume",
                "Node/NodePublishVolume", "Node/NodeUnpublishVolume", "Node/NodeGetVolumeStats", "Node/NodeExpandVolume",
                "GroupController/CreateVolumeGroupSnapshot", "GroupController/GetVolumeGroupSnapshot",
                "GroupController/DeleteVolumeGroupSnapshot", "VolumeGroup/CreateVolumeGroup", "VolumeGroup/DeleteVolumeGroup",
                "VolumeGroup/ModifyVolumeGroupMembership", "VolumeGroup/ControllerGetVolumeGroup")) {
            assertTrue(missing.contains(rpc), () -> rpc + " has no missing-field test");
        }
        assertEquals(24, missing.size(), () -> "RPCs with missing-field tests: " + missing);
    }
}
