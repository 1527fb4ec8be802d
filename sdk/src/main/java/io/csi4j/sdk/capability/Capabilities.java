package io.csi4j.sdk.capability;

import io.csi4j.proto.addons.identity.Capability;
import io.csi4j.proto.addons.identity.GetCapabilitiesResponse;
import io.csi4j.proto.csi.ControllerGetCapabilitiesResponse;
import io.csi4j.proto.csi.ControllerServiceCapability;
import io.csi4j.proto.csi.GetPluginCapabilitiesResponse;
import io.csi4j.proto.csi.GroupControllerGetCapabilitiesResponse;
import io.csi4j.proto.csi.GroupControllerServiceCapability;
import io.csi4j.proto.csi.NodeGetCapabilitiesResponse;
import io.csi4j.proto.csi.NodeServiceCapability;
import io.csi4j.proto.csi.PluginCapability;
import com.google.protobuf.ProtocolMessageEnum;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Capability responses from enum values, so a service answers e.g.
 * {@code Capabilities.controller(CREATE_DELETE_VOLUME, LIST_VOLUMES)}. Duplicates are dropped (first one wins
 * the position); UNKNOWN and unrecognized values are refused, since a CO would misread them.
 */
public final class Capabilities {
    private Capabilities() {}

    /** GetPluginCapabilities: services and volume expansion modes. */
    public static GetPluginCapabilitiesResponse plugin(Set<PluginCapability.Service.Type> services,
                                                       Set<PluginCapability.VolumeExpansion.Type> expansion) {
        var response = GetPluginCapabilitiesResponse.newBuilder();
        for (var type : distinct(services.toArray(PluginCapability.Service.Type[]::new))) {
            response.addCapabilities(PluginCapability.newBuilder()
                    .setService(PluginCapability.Service.newBuilder().setType(type)));
        }
        for (var type : distinct(expansion.toArray(PluginCapability.VolumeExpansion.Type[]::new))) {
            response.addCapabilities(PluginCapability.newBuilder()
                    .setVolumeExpansion(PluginCapability.VolumeExpansion.newBuilder().setType(type)));
        }
        return response.build();
    }

    /** GetPluginCapabilities with services only. */
    public static GetPluginCapabilitiesResponse plugin(PluginCapability.Service.Type... services) {
        return plugin(new LinkedHashSet<>(Arrays.asList(services)), Set.of());
    }

    public static ControllerGetCapabilitiesResponse controller(ControllerServiceCapability.RPC.Type... rpcs) {
        var response = ControllerGetCapabilitiesResponse.newBuilder();
        for (var type : distinct(rpcs)) {
            response.addCapabilities(ControllerServiceCapability.newBuilder()
                    .setRpc(ControllerServiceCapability.RPC.newBuilder().setType(type)));
        }
        return response.build();
    }

    public static NodeGetCapabilitiesResponse node(NodeServiceCapability.RPC.Type... rpcs) {
        var response = NodeGetCapabilitiesResponse.newBuilder();
        for (var type : distinct(rpcs)) {
            response.addCapabilities(NodeServiceCapability.newBuilder()
                    .setRpc(NodeServiceCapability.RPC.newBuilder().setType(type)));
        }
        return response.build();
    }

    public static GroupControllerGetCapabilitiesResponse groupController(GroupControllerServiceCapability.RPC.Type... rpcs) {
        var response = GroupControllerGetCapabilitiesResponse.newBuilder();
        for (var type : distinct(rpcs)) {
            response.addCapabilities(GroupControllerServiceCapability.newBuilder()
                    .setRpc(GroupControllerServiceCapability.RPC.newBuilder().setType(type)));
        }
        return response.build();
    }

    /** CSI-Addons GetCapabilities: the services and volume group features the plugin offers on its addons socket. */
    public static GetCapabilitiesResponse addons(Set<Capability.Service.Type> services, Set<Capability.VolumeGroup.Type> volumeGroup) {
        var response = GetCapabilitiesResponse.newBuilder();
        for (var type : distinct(services.toArray(Capability.Service.Type[]::new))) {
            response.addCapabilities(Capability.newBuilder().setService(Capability.Service.newBuilder().setType(type)));
        }
        for (var type : distinct(volumeGroup.toArray(Capability.VolumeGroup.Type[]::new))) {
            response.addCapabilities(Capability.newBuilder().setVolumeGroup(Capability.VolumeGroup.newBuilder().setType(type)));
        }
        return response.build();
    }

    @SafeVarargs
    private static <E extends Enum<E> & ProtocolMessageEnum> List<E> distinct(E... values) {
        Set<E> seen = new LinkedHashSet<>();
        for (E value : values) {
            if (value == null || value.name().equals("UNRECOGNIZED") || value.getNumber() == 0) {
                throw new IllegalArgumentException("not a capability: " + value);
            }
            seen.add(value);
        }
        return List.copyOf(seen);
    }
}
