package io.csi4j.sdk.capability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.csi4j.proto.addons.identity.Capability;
import io.csi4j.proto.csi.ControllerServiceCapability;
import io.csi4j.proto.csi.GroupControllerServiceCapability;
import io.csi4j.proto.csi.NodeServiceCapability;
import io.csi4j.proto.csi.PluginCapability;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CapabilitiesTest {
    @Test
    void buildsEachResponseFromEnumsWithoutDuplicates() {
        var controller = Capabilities.controller(ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME,
                ControllerServiceCapability.RPC.Type.LIST_VOLUMES, ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME);
        assertEquals(List.of(ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME, ControllerServiceCapability.RPC.Type.LIST_VOLUMES),
                controller.getCapabilitiesList().stream().map(c -> c.getRpc().getType()).toList());
        var node = Capabilities.node(NodeServiceCapability.RPC.Type.STAGE_UNSTAGE_VOLUME, NodeServiceCapability.RPC.Type.EXPAND_VOLUME);
        assertEquals(2, node.getCapabilitiesCount());
        var group = Capabilities.groupController(GroupControllerServiceCapability.RPC.Type.CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT);
        assertEquals(GroupControllerServiceCapability.RPC.Type.CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT, group.getCapabilities(0).getRpc().getType());
        var plugin = Capabilities.plugin(Set.of(PluginCapability.Service.Type.CONTROLLER_SERVICE),
                Set.of(PluginCapability.VolumeExpansion.Type.ONLINE));
        assertEquals(PluginCapability.Service.Type.CONTROLLER_SERVICE, plugin.getCapabilities(0).getService().getType());
        assertEquals(PluginCapability.VolumeExpansion.Type.ONLINE, plugin.getCapabilities(1).getVolumeExpansion().getType());
        var addons = Capabilities.addons(Set.of(Capability.Service.Type.CONTROLLER_SERVICE),
                Set.of(Capability.VolumeGroup.Type.VOLUME_GROUP));
        assertEquals(Capability.VolumeGroup.Type.VOLUME_GROUP, addons.getCapabilities(1).getVolumeGroup().getType());
    }

    @Test
    void refusesUnknownValues() {
        assertThrows(IllegalArgumentException.class, () -> Capabilities.controller(ControllerServiceCapability.RPC.Type.UNKNOWN));
        assertThrows(IllegalArgumentException.class, () -> Capabilities.node(NodeServiceCapability.RPC.Type.UNRECOGNIZED));
    }
}
