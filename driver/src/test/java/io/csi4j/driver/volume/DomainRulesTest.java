package io.csi4j.driver.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.csi.StorageStatus;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.MemoryPool;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.SnapshotFilter;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.snapshot.SnapshotBlocks;
import io.csi4j.driver.snapshot.Snapshots;
import io.csi4j.driver.storage.StorageException;
import io.grpc.Status;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The controller's domain rules (the parts of Volumes, Snapshots) against an engine held in memory: capacity, idempotency by
 * name, NOT_FOUND, ALREADY_EXISTS, and that no call, failed or not, leaves a row without its artifact or an
 * artifact without its row; what the engine's capabilities refuse is refused before anything is written. No
 * root, no kernel: the real-kernel tests prove the engines themselves.
 */
class DomainRulesTest {
    private static final long MIB = 1L << 20;
    private static final String NODE = "node-1";
    /** Room for a few default-sized (1 GiB) volumes. */
    private static final long POOL = 4L << 30;

    @TempDir
    Path dir;

    private Catalog catalog;
    private MemoryPool pool;
    private Volumes volumes;
    private Snapshots snapshots;
    /** A 64 MiB ext4 volume named "base" and its snapshot "snap": what most rules meet. */
    private VolumeRecord base;
    private SnapshotRecord snap;

    @BeforeEach
    void world() {
        catalog = Catalog.openIn(dir);
        pool = new MemoryPool(POOL);
        DriverConfig config = DriverConfig.defaults(dir, NODE);
        volumes = new Volumes(catalog, pool, config, InstantSource.system());
        snapshots = new Snapshots(catalog, pool, volumes, config, InstantSource.system());
        base = volumes.creation().create(request("base", new CapacityRange(64 * MIB, 0), mount("")));
        snap = snapshots.create("snap", base.id(), Map.of());
    }

    @AfterEach
    void close() {
        catalog.close();
    }

    record Rule(String name, Consumer<DomainRulesTest> call, Status.Code expected) {
        @Override
        public String toString() {
            return name + " -> " + expected;
        }
    }

    static Stream<Rule> rules() {
        String unknownSnapshot = ObjectId.generate(ObjectId.Kind.SNAPSHOT, NODE).toString();
        String unknownVolume = ObjectId.generate(ObjectId.Kind.VOLUME, NODE).toString();
        String othersVolume = ObjectId.generate(ObjectId.Kind.VOLUME, "node-2").toString();
        return Stream.of(
                // CreateVolume: capacity
                new Rule("a blank volume the pool can hold", t -> t.create("v", range(100 * MIB, 0), mount("")), Status.Code.OK),
                new Rule("more than the pool holds", t -> t.create("v", range(2 * POOL, 0), mount("")), Status.Code.RESOURCE_EXHAUSTED),
                new Rule("a limit below the smallest volume", t -> t.create("v", range(1, 100), mount("")), Status.Code.OUT_OF_RANGE),
                new Rule("a restore into less than the snapshot", t -> t.create("v", range(MIB, 32 * MIB), mount(""),
                        new ContentSource.FromSnapshot(t.snap.id())), Status.Code.OUT_OF_RANGE),
                // CreateVolume: idempotency by name
                new Rule("the same name with the same arguments", t -> t.create("base", range(64 * MIB, 0), mount("")), Status.Code.OK),
                new Rule("the same name with no size asked", t -> t.create("base", CapacityRange.ANY, mount("")), Status.Code.OK),
                new Rule("the same name, another size", t -> t.create("base", range(128 * MIB, 0), mount("")), Status.Code.ALREADY_EXISTS),
                new Rule("the same name, block instead of mount", t -> t.create("base", range(64 * MIB, 0),
                        Capability.block(AccessMode.SINGLE_NODE_WRITER)), Status.Code.ALREADY_EXISTS),
                new Rule("the same name, another fs_type", t -> t.create("base", range(64 * MIB, 0), mount("xfs")), Status.Code.ALREADY_EXISTS),
                new Rule("the same name, another source", t -> t.create("base", range(64 * MIB, 0), mount(""),
                        new ContentSource.FromSnapshot(t.snap.id())), Status.Code.ALREADY_EXISTS),
                // CreateVolume: sources
                new Rule("a restore of the snapshot", t -> t.create("v", CapacityRange.ANY, mount(""),
                        new ContentSource.FromSnapshot(t.snap.id())), Status.Code.OK),
                new Rule("a clone of the volume", t -> t.create("v", CapacityRange.ANY, mount(""),
                        new ContentSource.FromVolume(t.base.id())), Status.Code.OK),
                new Rule("a restore of a snapshot that does not exist", t -> t.create("v", CapacityRange.ANY, mount(""),
                        new ContentSource.FromSnapshot(unknownSnapshot)), Status.Code.NOT_FOUND),
                new Rule("a restore of an id that is none of ours", t -> t.create("v", CapacityRange.ANY, mount(""),
                        new ContentSource.FromSnapshot("../../etc")), Status.Code.NOT_FOUND),
                new Rule("a clone of a volume that does not exist", t -> t.create("v", CapacityRange.ANY, mount(""),
                        new ContentSource.FromVolume(unknownVolume)), Status.Code.NOT_FOUND),
                new Rule("a clone of another node's volume", t -> t.create("v", CapacityRange.ANY, mount(""),
                        new ContentSource.FromVolume(othersVolume)), Status.Code.FAILED_PRECONDITION),
                // CreateVolume: arguments, checked before anything is written
                new Rule("an unknown parameter", t -> t.volumes.creation().create(new NewVolume("v", CapacityRange.ANY, List.of(mount("")),
                        Map.of("speed", "fast"), Map.of(), ContentSource.NONE, Optional.empty())), Status.Code.INVALID_ARGUMENT),
                new Rule("thick on an engine without preallocation (the dir engine's case)", t -> t.volumes.creation().create(new NewVolume("v",
                        CapacityRange.ANY, List.of(mount("")), Map.of(Provisioning.PARAMETER, "thick"), Map.of(), ContentSource.NONE,
                        Optional.empty())), Status.Code.INVALID_ARGUMENT),
                new Rule("a provisioning neither thin nor thick", t -> t.volumes.creation().create(new NewVolume("v", CapacityRange.ANY,
                        List.of(mount("")), Map.of(Provisioning.PARAMETER, "lazy"), Map.of(), ContentSource.NONE, Optional.empty())),
                        Status.Code.INVALID_ARGUMENT),
                new Rule("a thick clone on an engine without preallocation", t -> t.volumes.creation().create(new NewVolume("v",
                        CapacityRange.ANY, List.of(mount("")), Map.of(Provisioning.PARAMETER, "thick"), Map.of(),
                        new ContentSource.FromVolume(t.base.id()), Optional.empty())), Status.Code.INVALID_ARGUMENT),
                new Rule("a readAheadKiB out of range", t -> t.volumes.creation().create(new NewVolume("v", CapacityRange.ANY, List.of(mount("")),
                        Map.of(), Map.of("readAheadKiB", "99999999"), ContentSource.NONE, Optional.empty())), Status.Code.INVALID_ARGUMENT),
                new Rule("a multi-node access mode", t -> t.create("v", CapacityRange.ANY,
                        Capability.mount(AccessMode.MULTI_NODE_MULTI_WRITER, "")), Status.Code.INVALID_ARGUMENT),
                new Rule("an fs_type no engine makes", t -> t.create("v", CapacityRange.ANY, mount("zfs")), Status.Code.INVALID_ARGUMENT),
                new Rule("a topology that excludes this node", t -> t.volumes.creation().create(new NewVolume("v", CapacityRange.ANY,
                        List.of(mount("")), Map.of(), Map.of(), ContentSource.NONE, Optional.of(Set.of("node-2")))),
                        Status.Code.RESOURCE_EXHAUSTED),
                // CreateVolume: the effect fails; the intent is rolled back
                new Rule("a blank create on a full disk", t -> {
                    t.pool.failNext("createVolume");
                    t.create("v", CapacityRange.ANY, mount(""));
                }, Status.Code.RESOURCE_EXHAUSTED),
                new Rule("a restore on a full disk", t -> {
                    t.pool.failNext("restoreSnapshot");
                    t.create("v", CapacityRange.ANY, mount(""), new ContentSource.FromSnapshot(t.snap.id()));
                }, Status.Code.RESOURCE_EXHAUSTED),
                // DeleteVolume
                new Rule("a delete, twice", t -> {
                    String id = t.create("v", CapacityRange.ANY, mount("")).id();
                    t.volumes.deletion().delete(id);
                    t.volumes.deletion().delete(id);
                }, Status.Code.OK),
                new Rule("a delete of a volume that never was", t -> t.volumes.deletion().delete(unknownVolume), Status.Code.OK),
                new Rule("a delete of a staged volume", t -> {
                    t.pool.attach(t.base.id(), true);
                    t.volumes.deletion().delete(t.base.id());
                }, Status.Code.FAILED_PRECONDITION),
                // ControllerExpandVolume
                new Rule("a growth the pool holds", t -> t.volumes.changes().expand(t.base.id(), range(128 * MIB, 0)), Status.Code.OK),
                new Rule("a growth beyond the pool", t -> t.volumes.changes().expand(t.base.id(), range(2 * POOL, 0)), Status.Code.RESOURCE_EXHAUSTED),
                new Rule("a shrink", t -> t.volumes.changes().expand(t.base.id(), range(MIB, 32 * MIB)), Status.Code.OUT_OF_RANGE),
                new Rule("a growth of a volume that does not exist", t -> t.volumes.changes().expand(unknownVolume, range(128 * MIB, 0)),
                        Status.Code.NOT_FOUND),
                // CreateSnapshot / DeleteSnapshot
                new Rule("a snapshot, again by the same name", t -> t.snapshots.create("snap", t.base.id(), Map.of()), Status.Code.OK),
                new Rule("a snapshot by a taken name of another volume", t -> t.snapshots.create("snap",
                        t.create("v", CapacityRange.ANY, mount("")).id(), Map.of()), Status.Code.ALREADY_EXISTS),
                new Rule("a snapshot of a volume that does not exist", t -> t.snapshots.create("s", unknownVolume, Map.of()),
                        Status.Code.NOT_FOUND),
                new Rule("a snapshot with a parameter", t -> t.snapshots.create("s", t.base.id(), Map.of("k", "v")),
                        Status.Code.INVALID_ARGUMENT),
                new Rule("a snapshot on a full disk", t -> {
                    t.pool.failNext("createSnapshot");
                    t.snapshots.create("s", t.base.id(), Map.of());
                }, Status.Code.RESOURCE_EXHAUSTED),
                new Rule("a snapshot delete, twice", t -> {
                    t.snapshots.delete(t.snap.id());
                    t.snapshots.delete(t.snap.id());
                }, Status.Code.OK),
                new Rule("a snapshot that does not exist", t -> t.snapshots.get(unknownSnapshot), Status.Code.NOT_FOUND));
    }

    /** Requests the engine's capabilities refuse: answered before any row or artifact is written. */
    static Stream<Rule> refusedBeforeAnyWrite() {
        return Stream.of(
                new Rule("a mutable parameter this engine cannot apply", t -> t.createMutable("v", ContentSource.NONE,
                        Map.of("compression", "zstd")), Status.Code.INVALID_ARGUMENT),
                new Rule("a clone with a mutable parameter this engine cannot apply", t -> t.createMutable("v",
                        new ContentSource.FromVolume(t.base.id()), Map.of("compression", "zstd")), Status.Code.INVALID_ARGUMENT),
                new Rule("a restore with a mutable parameter this engine cannot apply", t -> t.createMutable("v",
                        new ContentSource.FromSnapshot(t.snap.id()), Map.of("compression", "zstd")), Status.Code.INVALID_ARGUMENT),
                new Rule("an unknown mutable parameter", t -> t.createMutable("v", ContentSource.NONE, Map.of("iops", "100")),
                        Status.Code.INVALID_ARGUMENT),
                new Rule("a readAheadKiB above its range", t -> t.createMutable("v", ContentSource.NONE,
                        Map.of("readAheadKiB", "65537")), Status.Code.INVALID_ARGUMENT),
                new Rule("a readAheadKiB that is no number", t -> t.createMutable("v", new ContentSource.FromVolume(t.base.id()),
                        Map.of("readAheadKiB", "fast")), Status.Code.INVALID_ARGUMENT),
                new Rule("an fs_type the engine does not make", t -> t.create("v", CapacityRange.ANY, mount("btrfs")),
                        Status.Code.INVALID_ARGUMENT),
                new Rule("a clone to an fs_type the engine does not make", t -> t.create("v", CapacityRange.ANY, mount("zfs"),
                        new ContentSource.FromVolume(t.base.id())), Status.Code.INVALID_ARGUMENT),
                new Rule("a limit below the smallest volume the engine makes", t -> t.create("v", range(MIB + 1, MIB + 1),
                        mount("")), Status.Code.OUT_OF_RANGE),
                new Rule("an unknown parameter on a clone", t -> t.volumes.creation().create(new NewVolume("v", CapacityRange.ANY,
                        List.of(mount("")), Map.of("speed", "fast"), Map.of(), new ContentSource.FromVolume(t.base.id()),
                        Optional.empty())), Status.Code.INVALID_ARGUMENT));
    }

    /** What a CO may ask of a replication point's id: answered as of an unknown snapshot (a delete: refused, as documented). */
    static Stream<Rule> pointRequests() {
        return Stream.of(
                new Rule("a restore from a point", t -> t.create("v", CapacityRange.ANY, mount(""),
                        new ContentSource.FromSnapshot(t.point().id())), Status.Code.NOT_FOUND),
                new Rule("GetSnapshot of a point", t -> t.snapshots.get(t.point().id()), Status.Code.NOT_FOUND),
                new Rule("GetMetadataAllocated of a point", t -> new SnapshotBlocks(t.snapshots, t.pool)
                        .allocated(t.point().id(), 0, () -> false), Status.Code.NOT_FOUND),
                new Rule("GetMetadataDelta from a point", t -> new SnapshotBlocks(t.snapshots, t.pool)
                        .delta(t.point().id(), t.snap.id(), 0, () -> false), Status.Code.NOT_FOUND),
                new Rule("GetMetadataDelta to a point", t -> new SnapshotBlocks(t.snapshots, t.pool)
                        .delta(t.snap.id(), t.point().id(), 0, () -> false), Status.Code.NOT_FOUND),
                new Rule("ListSnapshots by a point's id", t -> {
                    if (!t.snapshots.listReady(0, 10, new SnapshotFilter(t.point().id(), null)).items().isEmpty()) {
                        throw new AssertionError("a point listed");
                    }
                }, Status.Code.OK),
                new Rule("DeleteSnapshot of a point (a documented refusal)", t -> t.snapshots.delete(t.point().id()),
                        Status.Code.FAILED_PRECONDITION));
    }

    private SnapshotRecord point;

    /** One replication point of "base", cut once per rule (replication's own call, as Rounds cuts it). */
    private SnapshotRecord point() {
        if (point == null) point = snapshots.createPoint(SnapshotRecord.POINT_PREFIX + base.id() + "-n-1", base.id(), "");
        return point;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pointRequests")
    void aPointIsNoSnapshotOfTheCo(Rule rule) {
        SnapshotRecord p = point();
        Set<String> volumesBefore = catalogIds();
        Set<String> snapshotsBefore = snapshotIds();
        long writes = pool.writes();
        assertEquals(rule.expected(), codeOf(() -> rule.call().accept(this)), rule.name());
        assertEquals(writes, pool.writes(), "no artifact written for " + rule.name());
        assertEquals(volumesBefore, catalogIds(), "no volume row left for " + rule.name());
        assertEquals(snapshotsBefore, snapshotIds(), "the point kept, nothing added, after " + rule.name());
        assertEquals(p, snapshots.byName(p.name()).orElseThrow(), "the point unchanged");
        assertEquals(catalogIds(), pool.volumeArtifacts(), "volumes: rows vs artifacts after " + rule.name());
        assertEquals(snapshotIds(), pool.snapshotArtifacts(), "snapshots: rows vs artifacts after " + rule.name());
    }

    /** ValidateVolumeCapabilities confirms only what CreateVolume would take on this engine and pool. */
    @Test
    void validateConfirmsOnlyWhatCreateWouldTake() {
        List<Capability> caps = List.of(mount(""));
        assertEquals(Optional.empty(), volumes.rules().unconfirmed(base, caps, Map.of(), Map.of("readAheadKiB", "512"), Map.of()));
        Optional<String> why = volumes.rules().unconfirmed(base, caps, Map.of(), Map.of("compression", "zstd"), Map.of());
        assertTrue(why.isPresent(), "compression confirmed on an engine that cannot apply it");
        assertTrue(volumes.rules().unconfirmed(base, caps, Map.of(), Map.of("readAheadKiB", "65537"), Map.of()).isPresent());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusedBeforeAnyWrite")
    void refusedBeforeAnyWrite(Rule rule) {
        long writes = pool.writes();
        long syncs = catalog.logSyncs();
        Set<String> volumesBefore = catalogIds();
        assertEquals(rule.expected(), codeOf(() -> rule.call().accept(this)), rule.name());
        assertEquals(writes, pool.writes(), "no artifact written for " + rule.name());
        assertEquals(syncs, catalog.logSyncs(), "no row committed for " + rule.name());
        assertEquals(volumesBefore, catalogIds(), "no row left for " + rule.name());
        assertEquals(catalogIds(), pool.volumeArtifacts(), "volumes: rows vs artifacts after " + rule.name());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rules")
    void ruleHolds(Rule rule) {
        assertEquals(rule.expected(), codeOf(() -> rule.call().accept(this)), rule.name());
        // whatever the answer: every row has its artifact and every artifact its row (nothing lost, nothing leaked)
        assertEquals(catalogIds(), pool.volumeArtifacts(), "volumes: rows vs artifacts after " + rule.name());
        assertEquals(snapshotIds(), pool.snapshotArtifacts(), "snapshots: rows vs artifacts after " + rule.name());
    }

    @Test
    void aRepeatedCreateAnswersTheFirstVolume() {
        VolumeRecord again = create("base", range(64 * MIB, 0), mount(""));
        assertEquals(base.id(), again.id());
        assertEquals(base.id(), create("base", CapacityRange.ANY, mount("")).id());
        VolumeRecord other = create("other", range(64 * MIB, 0), mount(""));
        assertNotEquals(base.id(), other.id());
        assertEquals(snap.id(), snapshots.create("snap", base.id(), Map.of()).id());
    }

    @Test
    void sizesAreWhatTheEngineMadeAndWhatThePoolCounts() {
        VolumeRecord odd = create("odd", range(10 * MIB + 1, 0), mount(""));
        assertEquals(11 * MIB, odd.capacityBytes(), "rounded up to whole MiB");
        assertEquals(pool.sizeOf(odd.id()), odd.capacityBytes());
        VolumeRecord restored = create("restored", range(MIB, 0), mount(""), new ContentSource.FromSnapshot(snap.id()));
        assertEquals(64 * MIB, restored.capacityBytes(), "at least the snapshot's size");
        assertEquals(1L << 30, create("default", CapacityRange.ANY, mount("")).capacityBytes(), "no size asked: the default");
        long free = pool.pool().allocatableBytes();
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, codeOf(() -> create("big", range(free + MIB, 0), mount(""))));
        assertEquals(Status.Code.OK, codeOf(() -> create("fits", range(free, 0), mount(""))), "exactly what is left");
        assertEquals(0, pool.pool().allocatableBytes());
    }

    private VolumeRecord create(String name, CapacityRange range, Capability capability) {
        return create(name, range, capability, ContentSource.NONE);
    }

    private VolumeRecord create(String name, CapacityRange range, Capability capability, ContentSource source) {
        return volumes.creation().create(request(name, range, capability, source));
    }

    private VolumeRecord createMutable(String name, ContentSource source, Map<String, String> mutableParameters) {
        return volumes.creation().create(new NewVolume(name, CapacityRange.ANY, List.of(mount("")), Map.of(), mutableParameters,
                source, Optional.empty()));
    }

    private static NewVolume request(String name, CapacityRange range, Capability capability) {
        return request(name, range, capability, ContentSource.NONE);
    }

    private static NewVolume request(String name, CapacityRange range, Capability capability, ContentSource source) {
        return new NewVolume(name, range, List.of(capability), Map.of(), Map.of(), source, Optional.empty());
    }

    private static CapacityRange range(long required, long limit) {
        return new CapacityRange(required, limit);
    }

    private static Capability mount(String fsType) {
        return Capability.mount(AccessMode.SINGLE_NODE_WRITER, fsType);
    }

    private Set<String> catalogIds() {
        return volumes.reads().list(0, 1000).items().stream().map(VolumeRecord::id).collect(Collectors.toSet());
    }

    private Set<String> snapshotIds() {
        return snapshots.list(0, 1000, SnapshotFilter.ALL).items().stream().map(SnapshotRecord::id).collect(Collectors.toSet());
    }

    /** The code the CSI edge answers: the one a domain kind or a storage reason maps to. */
    private static Status.Code codeOf(Runnable call) {
        try {
            call.run();
            return Status.Code.OK;
        } catch (DomainException e) {
            return StorageStatus.code(e.kind());
        } catch (StorageException e) {
            return StorageStatus.code(e.reason());
        }
    }
}
