package io.csi4j.driver.addons;

import static io.csi4j.driver.addons.VolumeGroupEndToEndTest.code;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig.GroupDeletePolicy;
import io.csi4j.driver.addons.Plugin.Setup;
import io.csi4j.proto.addons.identity.Capability;
import io.csi4j.proto.addons.identity.GetCapabilitiesRequest;
import io.csi4j.proto.addons.volumegroup.CreateVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.DeleteVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.ModifyVolumeGroupMembershipRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.grpc.Status.Code;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Configured without LIMIT_VOLUME_TO_ONE_VOLUME_GROUP, a volume may be in several groups. Deleting a group
 * that would take such a shared volume with it is refused: the other group still holds it.
 */
class SeveralGroupsPerVolumeTest {
    @TempDir Path dir;

    @Test
    void aSharedVolumeKeepsBothGroupsHonest() {
        try (Plugin plugin = Plugin.start(Plugin.config(dir.resolve("data"), "node-a", Setup.DIR,
                GroupDeletePolicy.DELETE_VOLUMES, 8, false))) {
            assertTrue(plugin.addonsIdentity().getCapabilities(GetCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList()
                    .stream().noneMatch(c -> c.getVolumeGroup().getType() == Capability.VolumeGroup.Type.LIMIT_VOLUME_TO_ONE_VOLUME_GROUP));
            String shared = plugin.createVolume("shared").getVolumeId();
            String own = plugin.createVolume("own").getVolumeId();
            String a = plugin.groups().createVolumeGroup(CreateVolumeGroupRequest.newBuilder().setName("a")
                    .addVolumeIds(shared).addVolumeIds(own).build()).getVolumeGroup().getVolumeGroupId();
            String b = plugin.groups().createVolumeGroup(CreateVolumeGroupRequest.newBuilder().setName("b")
                    .addVolumeIds(shared).build()).getVolumeGroup().getVolumeGroupId();
            assertEquals(List.of(a, b).stream().sorted().toList(), plugin.driver().catalog().volumeGroups().groupsOf(shared));

            code(Code.FAILED_PRECONDITION, () -> plugin.controller().deleteVolume(
                    DeleteVolumeRequest.newBuilder().setVolumeId(shared).build()));
            String refused = code(Code.FAILED_PRECONDITION, () -> plugin.groups().deleteVolumeGroup(
                    DeleteVolumeGroupRequest.newBuilder().setVolumeGroupId(a).build()));
            assertTrue(refused.contains(shared) && refused.contains(b), refused);
            assertTrue(plugin.driver().engine().volumeArtifacts().contains(own));

            plugin.groups().modifyVolumeGroupMembership(ModifyVolumeGroupMembershipRequest.newBuilder().setVolumeGroupId(b).build());
            plugin.groups().deleteVolumeGroup(DeleteVolumeGroupRequest.newBuilder().setVolumeGroupId(a).build());
            assertFalse(plugin.driver().engine().volumeArtifacts().contains(shared));
            assertFalse(plugin.driver().engine().volumeArtifacts().contains(own));
            assertEquals(1, plugin.driver().catalog().volumeGroups().count());
        }
    }
}
