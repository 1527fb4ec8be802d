package io.csi4j.testkit.suite;

import io.csi4j.proto.csi.ControllerServiceCapability;
import io.csi4j.proto.csi.GroupControllerServiceCapability;
import io.csi4j.proto.csi.NodeServiceCapability;
import io.csi4j.proto.csi.PluginCapability;
import io.csi4j.testkit.AccessType;
import io.csi4j.testkit.SanityConfig;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiPredicate;
import java.util.stream.Collectors;
import io.csi4j.proto.addons.identity.Capability;

/**
 * What a test needs from the plugin (advertised capabilities) or from the run (an addons endpoint, an
 * access type). A test whose requirement is not met is reported NOT_APPLICABLE with {@link #description()}.
 */
public record Requirement(List<Need> needs) {

    /** One thing a test needs, e.g. "controller capability CREATE_DELETE_SNAPSHOT". */
    public record Need(String description, BiPredicate<Capabilities, SanityConfig> test) {}

    public Requirement {
        needs = List.copyOf(needs);
    }

    private static Requirement of(String description, BiPredicate<Capabilities, SanityConfig> test) {
        return new Requirement(List.of(new Need(description, test)));
    }

    public boolean met(Capabilities caps, SanityConfig config) {
        return unmet(caps, config).isEmpty();
    }

    /** What the plugin or the run lacks, as it goes into a NOT_APPLICABLE message. */
    public List<String> unmet(Capabilities caps, SanityConfig config) {
        return needs.stream().filter(n -> !n.test().test(caps, config)).map(Need::description).toList();
    }

    public String description() {
        return needs.isEmpty() ? "nothing" : needs.stream().map(Need::description).collect(Collectors.joining(" and "));
    }

    /** Both requirements; a need both name is kept once. */
    public Requirement and(Requirement other) {
        Map<String, Need> all = new LinkedHashMap<>();
        for (Need n : needs) all.putIfAbsent(n.description(), n);
        for (Need n : other.needs) all.putIfAbsent(n.description(), n);
        return new Requirement(List.copyOf(all.values()));
    }

    public static final Requirement NONE = new Requirement(List.of());

    public static Requirement controllerService() {
        return of("plugin capability CONTROLLER_SERVICE", (c, k) -> c.controllerService());
    }

    public static Requirement controller(ControllerServiceCapability.RPC.Type... types) {
        Requirement r = controllerService();
        for (var type : types) {
            r = r.and(of("controller capability " + type, (c, k) -> c.has(type)));
        }
        return r;
    }

    public static Requirement node(NodeServiceCapability.RPC.Type type) {
        return of("node capability " + type, (c, k) -> c.has(type));
    }

    public static Requirement expansion(PluginCapability.VolumeExpansion.Type type) {
        return of("plugin capability VolumeExpansion " + type, (c, k) -> c.has(type));
    }

    public static Requirement groupController(GroupControllerServiceCapability.RPC.Type type) {
        return of("plugin capability GROUP_CONTROLLER_SERVICE", (c, k) -> c.has(PluginCapability.Service.Type.GROUP_CONTROLLER_SERVICE))
                .and(of("group controller capability " + type, (c, k) -> c.has(type)));
    }

    public static Requirement addons() {
        return of("an addons endpoint (--addons-endpoint)", (c, k) -> c.addons());
    }

    public static Requirement volumeGroup(Capability.VolumeGroup.Type... types) {
        Requirement r = addons();
        for (var type : types) {
            r = r.and(of("CSI-Addons capability VolumeGroup " + type, (c, k) -> c.has(type)));
        }
        return r;
    }

    public static Requirement access(AccessType type) {
        return of("access type " + type + " (--access-type " + type + ")", (c, k) -> k.accessType() == type);
    }

    public static Requirement mutableParams() {
        return of("mutable parameters to apply (SanityConfig.mutableParams)", (c, k) -> !k.mutableParams().isEmpty());
    }

    public static Requirement custom(String description, BiPredicate<Capabilities, SanityConfig> test) {
        return of(description, test);
    }
}
