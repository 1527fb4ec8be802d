package io.csi4j.testkit.suite;

import io.csi4j.proto.csi.ControllerServiceCapability;
import io.csi4j.proto.csi.GroupControllerServiceCapability;
import io.csi4j.proto.csi.NodeServiceCapability;
import io.csi4j.proto.csi.PluginCapability;
import io.csi4j.testkit.AccessType;
import io.csi4j.testkit.SanityConfig;
import java.util.function.BiPredicate;

/**
 * What a test needs from the plugin (advertised capabilities) or from the run (an addons endpoint, an
 * access type). A test whose requirement is not met is reported NOT_APPLICABLE with {@link #description()}.
 */
public record Requirement(String description, BiPredicate<Capabilities, SanityConfig> test) {

    public boolean met(Capabilities caps, SanityConfig config) {
        return test.test(caps, config);
    }

    public Requirement and(Requirement other) {
        if (this == NONE) return other;
        if (other == NONE) return this;
        java.util.LinkedHashSet<String> needs = new java.util.LinkedHashSet<>(java.util.List.of(description.split(" and ")));
        needs.addAll(java.util.List.of(other.description.split(" and ")));
        return new Requirement(String.join(" and ", needs), (c, k) -> test.test(c, k) && other.test.test(c, k));
    }

    public static final Requirement NONE = new Requirement("nothing", (c, k) -> true);

    public static Requirement controllerService() {
        return new Requirement("plugin capability CONTROLLER_SERVICE", (c, k) -> c.controllerService());
    }

    public static Requirement controller(ControllerServiceCapability.RPC.Type... types) {
        Requirement r = controllerService();
        for (var type : types) {
            r = r.and(new Requirement("controller capability " + type, (c, k) -> c.has(type)));
        }
        return r;
    }

    public static Requirement node(NodeServiceCapability.RPC.Type type) {
        return new Requirement("node capability " + type, (c, k) -> c.has(type));
    }

    public static Requirement expansion(PluginCapability.VolumeExpansion.Type type) {
        return new Requirement("plugin capability VolumeExpansion " + type, (c, k) -> c.has(type));
    }

    public static Requirement groupController(GroupControllerServiceCapability.RPC.Type type) {
        return new Requirement("plugin capability GROUP_CONTROLLER_SERVICE and group controller capability " + type,
                (c, k) -> c.has(PluginCapability.Service.Type.GROUP_CONTROLLER_SERVICE) && c.has(type));
    }

    public static Requirement addons() {
        return new Requirement("an addons endpoint (--addons-endpoint)", (c, k) -> c.addons());
    }

    public static Requirement volumeGroup(io.csi4j.proto.addons.identity.Capability.VolumeGroup.Type... types) {
        Requirement r = addons();
        for (var type : types) {
            r = r.and(new Requirement("CSI-Addons capability VolumeGroup " + type, (c, k) -> c.has(type)));
        }
        return r;
    }

    public static Requirement access(AccessType type) {
        return new Requirement("access type " + type + " (--access-type " + type + ")", (c, k) -> k.accessType() == type);
    }

    public static Requirement mutableParams() {
        return new Requirement("mutable parameters to apply (SanityConfig.mutableParams)", (c, k) -> !k.mutableParams().isEmpty());
    }

    public static Requirement custom(String description, BiPredicate<Capabilities, SanityConfig> test) {
        return new Requirement(description, test);
    }
}
