package io.csi4j.driver.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.MemoryPool;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeKind;
import io.csi4j.driver.model.VolumeRecord;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link VolumeRules} as tables: each rule's question and the answer or refusal (kind and the words that say why),
 * against an engine held in memory (block and ext4/xfs, only readAheadKiB, no thick volumes) on node "node-1".
 * Nothing is written anywhere: the rules read the engine's capabilities and the config only.
 */
class VolumeRulesTest {
    private static final long MIB = 1L << 20;
    private static final VolumeRules RULES = new VolumeRules(new MemoryPool(1L << 30),
            DriverConfig.defaults(Path.of("unused"), "node-1"));
    private static final VolumeRecord EXT4 = volume(VolumeKind.FILESYSTEM, "ext4", State.READY, Map.of(), ContentSource.NONE);
    private static final VolumeRecord DEFAULT_FS = volume(VolumeKind.FILESYSTEM, null, State.READY, Map.of(), ContentSource.NONE);
    private static final VolumeRecord BLOCK = volume(VolumeKind.BLOCK, null, State.READY, Map.of(), ContentSource.NONE);

    /** A question of a rule, and its answer: empty when the rule lets it pass, else the refusal's kind and words. */
    record Case(String name, Runnable ask, Optional<DomainException.Kind> refused, String says) {
        @Override public String toString() { return name; }
    }

    static Case passes(String name, Runnable ask) {
        return new Case(name, ask, Optional.empty(), "");
    }

    static Case refused(String name, DomainException.Kind kind, String says, Runnable ask) {
        return new Case(name, ask, Optional.of(kind), says);
    }

    static Stream<Case> checks() {
        return Stream.of(
                passes("no parameters", () -> RULES.checkParameters(Map.of(), false)),
                passes("the Kubernetes provisioner's keys", () -> RULES.checkParameters(
                        Map.of("csi.storage.k8s.io/pvc/name", "data", "csi.storage.k8s.io/pv/name", "pv-1"), false)),
                passes("a volume group and thin provisioning", () -> RULES.checkParameters(
                        Map.of(VolumeRules.PARAM_VOLUME_GROUP, "vg-x", Provisioning.PARAMETER, "thin"), false)),
                refused("an unknown key", DomainException.Kind.INVALID, "unknown parameters [color]",
                        () -> RULES.checkParameters(Map.of("color", "blue"), false)),
                refused("thick on an engine without preallocation", DomainException.Kind.INVALID, "makes no thick volumes",
                        () -> RULES.checkParameters(Map.of(Provisioning.PARAMETER, "thick"), false)),
                refused("a provisioning neither thin nor thick", DomainException.Kind.INVALID, "thin (the default) or thick",
                        () -> RULES.checkParameters(Map.of(Provisioning.PARAMETER, "fat"), false)),
                refused("replicas on a lone node", DomainException.Kind.EXHAUSTED, "needs 2 distinct nodes",
                        () -> RULES.checkParameters(Map.of(ReplicationParameters.REPLICAS, "2"), false)),
                passes("replicas for a replicated volume's primary", () -> RULES.checkParameters(
                        Map.of(ReplicationParameters.REPLICAS, "2"), true)),
                refused("an interval without replicas", DomainException.Kind.INVALID, "applies only with",
                        () -> RULES.checkParameters(Map.of(ReplicationParameters.INTERVAL, "30s"), false)),
                passes("no mutable parameters", () -> RULES.checkMutableParameters(Map.of(), Map.of())),
                passes("a mutable key the engine takes", () -> RULES.checkMutableParameters(Map.of(), Map.of("readAheadKiB", "512"))),
                refused("an interval on an ordinary volume", DomainException.Kind.INVALID, ReplicationParameters.INTERVAL,
                        () -> RULES.checkMutableParameters(Map.of(), Map.of(ReplicationParameters.INTERVAL, "10s"))),
                passes("no topology asked", () -> RULES.checkTopology(request(Optional.empty()))),
                passes("a topology that names this node", () -> RULES.checkTopology(request(Optional.of(Set.of("node-2", "node-1"))))),
                refused("a topology without this node", DomainException.Kind.EXHAUSTED, "provisions on node node-1",
                        () -> RULES.checkTopology(request(Optional.of(Set.of("node-2"))))),
                passes("a capability the volume serves", () -> VolumeRules.requireSupported(EXT4, Capability.mount(AccessMode.SINGLE_NODE_WRITER, "ext4"))),
                refused("a capability it does not", DomainException.Kind.INVALID, "volume is filesystem, not block",
                        () -> VolumeRules.requireSupported(EXT4, Capability.block(AccessMode.SINGLE_NODE_WRITER))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("checks")
    void eachCheckPassesOrRefusesWithItsKind(Case c) {
        if (c.refused().isEmpty()) {
            c.ask().run();
            return;
        }
        DomainException e = assertThrows(DomainException.class, c.ask()::run);
        assertEquals(c.refused().get(), e.kind(), e.getMessage());
        assertTrue(e.getMessage().contains(c.says()), e.getMessage());
    }

    record Served(String name, VolumeRecord volume, List<Capability> capabilities, String why) {
        @Override public String toString() { return name; }
    }

    static Stream<Served> capabilities() {
        return Stream.of(
                new Served("mount, any fs_type, of ext4", EXT4, List.of(Capability.mount(AccessMode.SINGLE_NODE_WRITER, "")), ""),
                new Served("mount ext4 of ext4, read-only too", EXT4, List.of(Capability.mount(AccessMode.SINGLE_NODE_WRITER, "ext4"),
                        Capability.mount(AccessMode.SINGLE_NODE_READER_ONLY, "ext4")), ""),
                new Served("mount ext4 of the default fs_type", DEFAULT_FS, List.of(Capability.mount(AccessMode.SINGLE_NODE_WRITER,
                        VolumeShape.DEFAULT_FS_TYPE)), ""),
                new Served("block of block", BLOCK, List.of(Capability.block(AccessMode.SINGLE_NODE_SINGLE_WRITER)), ""),
                new Served("no capability", EXT4, List.of(), ""),
                new Served("a multi-node mode", EXT4, List.of(Capability.mount(AccessMode.MULTI_NODE_MULTI_WRITER, "")),
                        "access mode MULTI_NODE_MULTI_WRITER needs more than one node"),
                new Served("block of a filesystem", EXT4, List.of(Capability.block(AccessMode.SINGLE_NODE_WRITER)),
                        "volume is filesystem, not block"),
                new Served("mount of block", BLOCK, List.of(Capability.mount(AccessMode.SINGLE_NODE_WRITER, "")),
                        "volume is block, not filesystem"),
                new Served("xfs of ext4", EXT4, List.of(Capability.mount(AccessMode.SINGLE_NODE_WRITER, "xfs")),
                        "volume's fs_type is ext4, not xfs"),
                new Served("the first capability not served answers", EXT4, List.of(Capability.mount(AccessMode.SINGLE_NODE_WRITER, "ext4"),
                        Capability.mount(AccessMode.SINGLE_NODE_WRITER, "xfs"), Capability.block(AccessMode.SINGLE_NODE_WRITER)),
                        "volume's fs_type is ext4, not xfs"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("capabilities")
    void unsupportedSaysWhyOrNothing(Served c) {
        assertEquals(c.why().isEmpty() ? Optional.empty() : Optional.of(c.why()), VolumeRules.unsupported(c.volume(), c.capabilities()));
    }

    record Repeat(String name, VolumeRecord existing, NewVolume request, Optional<DomainException.Kind> refused, String says) {
        @Override public String toString() { return name; }
    }

    static Stream<Repeat> repeats() {
        NewVolume same = new NewVolume("v", new CapacityRange(64 * MIB, 0), List.of(Capability.mount(AccessMode.SINGLE_NODE_WRITER, "ext4")),
                Map.of(), Map.of(), ContentSource.NONE, Optional.empty());
        return Stream.of(
                new Repeat("the same request", EXT4, same, Optional.empty(), ""),
                new Repeat("any capacity", EXT4, new NewVolume("v", CapacityRange.ANY, same.capabilities(), Map.of(), Map.of(),
                        ContentSource.NONE, Optional.empty()), Optional.empty(), ""),
                new Repeat("one still being created", volume(VolumeKind.FILESYSTEM, "ext4", State.CREATING, Map.of(), ContentSource.NONE),
                        same, Optional.of(DomainException.Kind.ABORTED), "volume 'v' is being created"),
                new Repeat("one being deleted", volume(VolumeKind.FILESYSTEM, "ext4", State.DELETING, Map.of(), ContentSource.NONE),
                        same, Optional.of(DomainException.Kind.ABORTED), "volume 'v' is being deleted"),
                new Repeat("a larger size", EXT4, new NewVolume("v", new CapacityRange(128 * MIB, 0), same.capabilities(), Map.of(),
                        Map.of(), ContentSource.NONE, Optional.empty()), Optional.of(DomainException.Kind.EXISTS),
                        "capacity " + 64 * MIB + " is outside the requested range"),
                new Repeat("block asked of a filesystem", EXT4, new NewVolume("v", same.range(),
                        List.of(Capability.block(AccessMode.SINGLE_NODE_WRITER)), Map.of(), Map.of(), ContentSource.NONE, Optional.empty()),
                        Optional.of(DomainException.Kind.EXISTS), "it is a filesystem volume"),
                new Repeat("another fs_type", EXT4, new NewVolume("v", same.range(),
                        List.of(Capability.mount(AccessMode.SINGLE_NODE_WRITER, "xfs")), Map.of(), Map.of(), ContentSource.NONE, Optional.empty()),
                        Optional.of(DomainException.Kind.EXISTS), "its fs_type is ext4"),
                new Repeat("another content source", EXT4, new NewVolume("v", same.range(), same.capabilities(), Map.of(), Map.of(),
                        new ContentSource.FromSnapshot("snap-x"), Optional.empty()), Optional.of(DomainException.Kind.EXISTS),
                        "its content source is empty"),
                new Repeat("other parameters, every difference named", volume(VolumeKind.FILESYSTEM, "ext4", State.READY,
                        Map.of(Provisioning.PARAMETER, "thin"), new ContentSource.FromVolume("vol-y")), same,
                        Optional.of(DomainException.Kind.EXISTS), "its content source is volume vol-y; its parameters are {"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("repeats")
    void aRepeatByNameAnswersTheVolumeOrNamesTheDifference(Repeat c) {
        VolumeShape shape = VolumeShape.requested(c.request().capabilities(), new MemoryPool(1L << 30));
        if (c.refused().isEmpty()) {
            assertSame(c.existing(), VolumeRules.existingIfCompatible(c.existing(), c.request(), shape));
            return;
        }
        DomainException e = assertThrows(DomainException.class, () -> VolumeRules.existingIfCompatible(c.existing(), c.request(), shape));
        assertEquals(c.refused().get(), e.kind(), e.getMessage());
        assertTrue(e.getMessage().contains(c.says()), e.getMessage());
    }

    /** ValidateVolumeCapabilities confirms only what CreateVolume would take, and the volume's own context. */
    static Stream<Object[]> confirmations() {
        List<Capability> mount = List.of(Capability.mount(AccessMode.SINGLE_NODE_WRITER, ""));
        return Stream.of(
                new Object[] {"all of it holds", mount, Map.of(), Map.of("readAheadKiB", "512"), EXT4.context(), ""},
                new Object[] {"a capability it does not serve", List.of(Capability.block(AccessMode.SINGLE_NODE_WRITER)), Map.of(),
                        Map.of(), Map.of(), "volume is filesystem, not block"},
                new Object[] {"a parameter CreateVolume refuses", mount, Map.of("color", "blue"), Map.of(), Map.of(), "unknown parameters [color]"},
                new Object[] {"a mutable key the engine lacks", mount, Map.of(), Map.of("compression", "zstd"), Map.of(), "compression"},
                new Object[] {"another volume's context", mount, Map.of(), Map.of(), Map.of("fsType", "xfs"), "is not this volume's"});
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("confirmations")
    void unconfirmedSaysTheFirstThingThatDoesNotHold(String name, List<Capability> capabilities, Map<String, String> parameters,
                                                     Map<String, String> mutableParameters, Map<String, String> context, String why) {
        Optional<String> answer = RULES.unconfirmed(EXT4, capabilities, parameters, mutableParameters, context);
        if (why.isEmpty()) {
            assertEquals(Optional.empty(), answer);
        } else {
            assertTrue(answer.isPresent() && answer.get().contains(why), name + ": " + answer);
        }
    }

    private static NewVolume request(Optional<Set<String>> allowedNodes) {
        return new NewVolume("v", CapacityRange.ANY, List.of(Capability.mount(AccessMode.SINGLE_NODE_WRITER, "")), Map.of(),
                Map.of(), ContentSource.NONE, allowedNodes);
    }

    private static VolumeRecord volume(VolumeKind kind, String fsType, State state, Map<String, String> parameters,
                                       ContentSource source) {
        Instant now = Instant.parse("2026-11-27T00:00:00Z");
        return new VolumeRecord("vol-x", "v", 64 * MIB, kind, fsType, parameters, Map.of(), source, "node-1", state, now, now);
    }
}
