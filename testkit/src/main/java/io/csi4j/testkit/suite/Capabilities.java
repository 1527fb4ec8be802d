package io.csi4j.testkit.suite;

import io.csi4j.proto.csi.ControllerServiceCapability;
import io.csi4j.proto.csi.GroupControllerServiceCapability;
import io.csi4j.proto.csi.NodeServiceCapability;
import io.csi4j.proto.csi.PluginCapability;
import java.util.Set;
import io.csi4j.proto.addons.identity.Capability;

/**
 * What the plugin advertised when the run began: the plan is derived from it. {@code addons} is true
 * when an addons endpoint was given; its capability sets are empty otherwise.
 */
public record Capabilities(
        Set<PluginCapability.Service.Type> plugin,
        Set<PluginCapability.VolumeExpansion.Type> expansion,
        Set<ControllerServiceCapability.RPC.Type> controller,
        Set<NodeServiceCapability.RPC.Type> node,
        Set<GroupControllerServiceCapability.RPC.Type> group,
        boolean addons,
        Set<Capability.Service.Type> addonsServices,
        Set<Capability.VolumeGroup.Type> volumeGroup) {

    public Capabilities {
        plugin = Set.copyOf(plugin);
        expansion = Set.copyOf(expansion);
        controller = Set.copyOf(controller);
        node = Set.copyOf(node);
        group = Set.copyOf(group);
        addonsServices = Set.copyOf(addonsServices);
        volumeGroup = Set.copyOf(volumeGroup);
    }

    public boolean has(PluginCapability.Service.Type type) { return plugin.contains(type); }
    public boolean has(PluginCapability.VolumeExpansion.Type type) { return expansion.contains(type); }
    public boolean has(ControllerServiceCapability.RPC.Type type) { return controller.contains(type); }
    public boolean has(NodeServiceCapability.RPC.Type type) { return node.contains(type); }
    public boolean has(GroupControllerServiceCapability.RPC.Type type) { return group.contains(type); }
    public boolean has(Capability.VolumeGroup.Type type) { return volumeGroup.contains(type); }

    public boolean controllerService() {
        return has(PluginCapability.Service.Type.CONTROLLER_SERVICE);
    }

    public boolean stages() {
        return has(NodeServiceCapability.RPC.Type.STAGE_UNSTAGE_VOLUME);
    }

    public boolean controllerPublishes() {
        return controllerService() && has(ControllerServiceCapability.RPC.Type.PUBLISH_UNPUBLISH_VOLUME);
    }
}
