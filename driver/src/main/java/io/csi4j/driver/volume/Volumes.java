package io.csi4j.driver.volume;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.catalog.CatalogTables;
import io.csi4j.driver.catalog.CatalogTransaction;
import io.csi4j.driver.catalog.DuplicateNameException;
import io.csi4j.driver.catalog.ReferenceException;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.ImageImport;
import io.csi4j.driver.engine.PoolBacking;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.engine.Preallocation;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.engine.SpaceReclaimer;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ObjectId.Kind;
import io.csi4j.driver.storage.ByteCount;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.ListedVolume;
import io.csi4j.driver.model.Page;
import io.csi4j.driver.model.PublicationRecord;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeGroupRecord;
import io.csi4j.driver.model.VolumeKind;
import io.csi4j.driver.model.VolumeListing;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.model.VolumeStatus;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.storage.StorageException;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Volume life cycle on the controller side, each mutation one crash-safe protocol:
 * <ul>
 *   <li>A blank volume: effect, then commit. The engine makes the image without syncing, then one
 *       transaction inserts the row READY: the call's one sync. A crash before the commit leaves an image
 *       that holds nothing and no row owns (swept at start-up); a power cut after it may lose the image,
 *       which the reconciler re-makes from the row (a blank volume is derivable from it).</li>
 *   <li>A clone or a restore: intent, effect, commit. The row is written CREATING, the reflink is made
 *       durable, then the row becomes READY; the reconciler rolls back a CREATING row.</li>
 *   <li>A delete: commit, then effect. One transaction deletes the row and records a tombstone (the one
 *       sync), then the files are unlinked without a sync. A crash in between leaves files that the tombstone
 *       names; the start-up sweep removes them. Tombstones are dropped in batches, after one sync of the
 *       pool's directory made their unlinks durable.</li>
 * </ul>
 */
public final class Volumes {
    /** StorageClass parameter placing a new volume into an existing CSI-Addons volume group. */
    public static final String PARAM_VOLUME_GROUP = "csi4j.io/volume-group";
    /** Keys the Kubernetes provisioner adds with --extra-create-metadata; accepted and kept. */
    public static final String KUBERNETES_PREFIX = "csi.storage.k8s.io/";
    private static final Set<String> KNOWN_PARAMETERS = Set.of(PARAM_VOLUME_GROUP, Provisioning.PARAMETER,
            ReplicationParameters.REPLICAS, ReplicationParameters.INTERVAL, ReplicationParameters.SPREAD_KEY);

    private final Catalog catalog;
    private final PoolStorage engine;
    private final PoolCapacity capacity;
    private final DriverConfig config;
    private final InstantSource clock;
    private final Lookup<VolumeRecord> lookup;
    private final Lookup<SnapshotRecord> snapshotLookup;
    /** Volumes whose files are unlinked but not yet synced away: their tombstones go after the next directory sync. */
    private final Queue<String> unlinked = new ConcurrentLinkedQueue<>();
    /** How many unlinks share one sync of the pool's directory (and one tombstone clean-up in a delete's commit). */
    static final int TOMBSTONE_BATCH = 256;

    public Volumes(Catalog catalog, PoolStorage engine, DriverConfig config, InstantSource clock) {
        this(catalog, engine, Optional.empty(), config, clock);
    }

    /** {@code backing}: the watch of the pool image's backing filesystem, when the pool is a thin image. */
    public Volumes(Catalog catalog, PoolStorage engine, Optional<PoolBacking> backing, DriverConfig config, InstantSource clock) {
        this.catalog = catalog;
        this.engine = engine;
        this.capacity = new PoolCapacity(engine, backing, config.overcommitRatio());
        this.config = config;
        this.clock = clock;
        this.lookup = Lookup.volumes(catalog, config.nodeId());
        this.snapshotLookup = Lookup.coSnapshots(catalog, config.nodeId());    // a point is no CO's source
    }

    // ---- CreateVolume ----

    public VolumeRecord create(NewVolume request) {
        return create(request, null);
    }

    /**
     * The primary's volume of a replicated volume (docs/replication.md), made under {@code replicatedId}, which the
     * cluster controller chose and which names this node: blank, or made from a snapshot or volume of this node with
     * every rule of an ordinary restore or clone (the controller places the primary on the source's node).
     */
    public VolumeRecord createReplica(NewVolume request, ReplicatedVolumeId replicatedId) {
        if (!replicatedId.heldBy(config.nodeId())) {
            throw DomainException.invalid("volume id " + replicatedId + " names no replica on node '" + config.nodeId() + "'");
        }
        Optional<VolumeRecord> existing = catalog.volumes().byName(request.name());
        if (existing.isPresent() && !existing.get().id().equals(replicatedId.toString())) {
            throw DomainException.exists("volume '" + request.name() + "' already exists as " + existing.get().id());
        }
        return create(request, replicatedId.toString());
    }

    private VolumeRecord create(NewVolume request, String givenId) {
        validateParameters(request.parameters(), givenId != null);
        VolumeShape shape = VolumeShape.requested(request.capabilities(), engine);
        checkTopology(request);

        Optional<VolumeRecord> existing = catalog.volumes().byName(request.name());
        if (existing.isPresent()) return existingIfCompatible(existing.get(), request, shape);

        long floor = switch (request.source()) {
            case ContentSource.None none -> 0;
            case ContentSource.FromSnapshot s -> snapshotLookup.ready(s.snapshotId(), "source snapshot").sizeBytes();
            case ContentSource.FromVolume v -> readyVolume(v.volumeId(), "source volume").capacityBytes();
        };
        long size = request.range().resolve(config.defaultVolumeBytes(), floor);
        String groupId = request.parameters().get(PARAM_VOLUME_GROUP);
        var row = intendedRow(request, shape, size, groupId, givenId);
        var label = new Artifact.Label(row.name(), "");                        // in the sidecar, for fsck --rebuild
        Optional<Preallocation> thick = Provisioning.of(request.parameters(), engine);
        if (request.source() instanceof ContentSource.None) {
            checkLimit(request, shape, size, engine.blankSize(size, shape.access()));   // before anything is written
            if (thick.isEmpty()) return createBlank(request, row, shape, label, groupId);
            requireThick(thick.get(), engine.blankSize(size, shape.access()));
        } else {
            thick.ifPresent(t -> requireThick(t, size));
        }
        // a thick volume's fill takes long and a blank one is not derivable from its row: intent, effect, commit
        catalog.volumes().insert(row);                                         // intent
        return effectThenCommit(request, shape, row, groupId, () -> thickened(thick, row.id(), request.source(), switch (request.source()) {
            case ContentSource.None none -> engine.createVolume(row.id(), size, shape.access(), label);
            case ContentSource.FromSnapshot s -> engine.restoreSnapshot(row.id(), s.snapshotId(), size, shape.access(), label);
            case ContentSource.FromVolume v -> engine.cloneVolume(row.id(), v.volumeId(), size, shape.access(), label);
        }));
    }

    /** A thick volume's image filled after it was made ({@code size}, returned): a blank one marked as a fresh fill. */
    private static long thickened(Optional<Preallocation> thick, String volumeId, ContentSource source, long size) {
        thick.ifPresent(t -> t.fill(volumeId, source instanceof ContentSource.None));
        return size;
    }

    /**
     * Effect and commit of a create whose intent (the CREATING row) is written: {@code effect} makes the artifact
     * durably and returns its size; the limit and the mutable parameters are applied; any failure rolls back.
     */
    private VolumeRecord effectThenCommit(NewVolume request, VolumeShape shape, VolumeRecord row, String groupId,
                                          LongSupplier effect) {
        return Lifecycle.effectThenCommit(() -> {
            long actual = effect.getAsLong();
            checkLimit(request, shape, row.capacityBytes(), actual);
            var engineKeys = ReplicationParameters.engineKeys(request.mutableParameters());   // the interval is the row's
            if (!engineKeys.isEmpty()) engine.modifyVolume(row.id(), engineKeys);
            return actual;
        }, () -> finishDelete(row.id()), actual -> commitCreated(row.id(), row.capacityBytes(), actual, groupId));
    }

    /** The answer to a create whose name a concurrent create took meanwhile: that volume, if it is compatible. */
    private VolumeRecord repeatOf(NewVolume request, VolumeShape shape) {
        return existingIfCompatible(catalog.volumes().byName(request.name()).orElseThrow(() ->
                DomainException.aborted("volume '" + request.name() + "' is being created and deleted; retry")), request, shape);
    }

    /** The rules checked before anything is written (room, mutable parameters, the group), and the CREATING row. */
    private VolumeRecord intendedRow(NewVolume request, VolumeShape shape, long size, String groupId, String givenId) {
        checkSpace(size);
        if (!request.mutableParameters().isEmpty()) {
            // a replicated volume's interval is kept in the row (it overrides the parameters'); the rest is the engine's
            var engineKeys = ReplicationParameters.checkCreate(request.parameters(), request.mutableParameters());
            MutableParameters.validate(engineKeys);
            engine.checkMutableParameters(engineKeys);     // not after the effect: nothing to roll back
        }
        if (groupId != null) readyGroupWithRoom(groupId);
        var now = clock.instant();
        String id = givenId != null ? givenId : ObjectId.generate(Kind.VOLUME, config.nodeId()).toString();
        return new VolumeRecord(id, request.name(), size,
                shape.kind(), shape.fsType(), request.parameters(), request.mutableParameters(), request.source(),
                config.nodeId(), State.CREATING, now, now);
    }

    /** The answer is read in the commit: a DeleteVolume right after it must not turn this CreateVolume into an error. */
    private VolumeRecord commitCreated(String volumeId, long size, long actual, String groupId) {
        return catalog.inTransaction(tx -> {                                   // commit
            if (actual != size) tx.volumes().setCapacity(volumeId, actual);
            if (groupId != null) tx.volumeGroups().addMember(groupId, volumeId);
            if (!tx.volumes().setState(volumeId, State.CREATING, State.READY)) {
                throw DomainException.aborted("volume " + volumeId + " changed state while being created");
            }
            return tx.volumes().byId(volumeId).orElseThrow();
        });
    }

    // ---- CreateVolume of a copy of another node's snapshot or volume ----

    /** The volume a repeat of this CreateVolume answers with, if one of its name exists (ALREADY_EXISTS if it differs). */
    public Optional<VolumeRecord> existing(NewVolume request) {
        validateParameters(request.parameters());
        VolumeShape shape = VolumeShape.requested(request.capabilities(), engine);
        checkTopology(request);
        return catalog.volumes().byName(request.name()).map(v -> existingIfCompatible(v, request, shape));
    }

    /** The data of another node's snapshot or volume, as it arrives. */
    public interface Incoming {
        /** The size of the source's image. */
        long sourceBytes();

        /** The replica the copy starts from (only changed ranges follow), or null for a full copy. */
        Replica base();

        /** The replica to keep of what arrived (a snapshot source), or null. */
        Replica keepAs();

        /** Writes everything that arrives into {@code target}, checked; throws when the copy breaks off. */
        void fill(ImageImport target);
    }

    /**
     * CreateVolume of a volume whose content source lives on another node, with every rule of {@link #create}: a
     * CREATING row (the intent, listed nowhere), the copy into an image no one sees, then the commit. A crash
     * before the commit leaves a CREATING row that the reconciler rolls back and a temporary file it sweeps.
     */
    public VolumeRecord createCopy(NewVolume request, Incoming incoming) {
        validateParameters(request.parameters());
        VolumeShape shape = VolumeShape.requested(request.capabilities(), engine);
        checkTopology(request);
        Optional<VolumeRecord> existing = catalog.volumes().byName(request.name());
        if (existing.isPresent()) return existingIfCompatible(existing.get(), request, shape);
        if (request.source() instanceof ContentSource.None) throw new IllegalArgumentException("a copy needs a content source");

        long size = request.range().resolve(config.defaultVolumeBytes(), incoming.sourceBytes());
        String groupId = request.parameters().get(PARAM_VOLUME_GROUP);
        Optional<Preallocation> thick = Provisioning.of(request.parameters(), engine);
        var row = intendedRow(request, shape, size, groupId, null);
        thick.ifPresent(t -> requireThick(t, size));
        try {
            catalog.volumes().insert(row);                                     // intent
        } catch (DuplicateNameException taken) {
            return repeatOf(request, shape);
        }
        String sourceRef = switch (request.source()) {
            case ContentSource.None none -> throw new IllegalStateException("checked above");
            case ContentSource.FromSnapshot s -> Artifact.snapshotSource(s.snapshotId());
            case ContentSource.FromVolume v -> Artifact.volumeSource(v.volumeId());
        };
        return effectThenCommit(request, shape, row, groupId, () -> {
            DataMover mover = engine.capability(DataMover.class).orElseThrow(() -> StorageException.unsupported(
                    "the " + engine.name() + " engine cannot make volumes from another node's data"));
            try (var target = mover.beginImport(row.id(), incoming.sourceBytes(), size, shape.access(), sourceRef,
                    new Artifact.Label(row.name(), ""), incoming.base(), incoming.keepAs())) {
                incoming.fill(target);
                return thickened(thick, row.id(), request.source(), target.commit());
            }
        });
    }

    /**
     * A replicated volume's secondary copy replaced by a new complete point (docs/replication.md): a new image is
     * built beside the old one (a reflink of {@code base} when given: a replica, or a still copy of this image, plus what {@code incoming} writes),
     * synced, kept as the replica {@code keepAs} and renamed over the old image, so the copy is always one complete
     * point. NOT_FOUND when the volume is gone: a round never recreates a deleted volume. The caller holds the
     * volume's replication lock and has checked that this copy is not writable here. A read-only stage is allowed
     * meanwhile: the look below only fails fast, the engine's commit looks again atomically with its rename (a stage
     * before it refuses the replacement, FAILED_PRECONDITION; one after attaches the new image).
     */
    public void replaceImage(String volumeId, long sourceBytes, io.csi4j.driver.engine.ImportBase base, Replica keepAs, java.util.function.Consumer<ImageImport> fill) {
        VolumeRecord v = readyVolume(volumeId, "volume");
        if (engine.inUse(volumeId)) {
            throw DomainException.precondition("volume " + volumeId + " is staged on this node; its copy cannot be replaced");
        }
        DataMover mover = engine.capability(DataMover.class).orElseThrow(() -> StorageException.unsupported(
                "the " + engine.name() + " engine cannot replicate volumes"));
        try (var target = mover.beginImport(volumeId, sourceBytes, Math.max(v.capacityBytes(), sourceBytes),
                VolumeShape.accessOf(v), Artifact.volumeSource(volumeId), new Artifact.Label(v.name(), ""), base, keepAs)) {
            fill.accept(target);
            target.commit();
        }
        // the primary was expanded since the point this copy held: the copy follows (its image already has the size), so
        // a handoff or failover serves the expanded capacity. After the image: a crash between is repaired by the next round.
        if (sourceBytes > v.capacityBytes()) catalog.volumes().setCapacity(volumeId, sourceBytes);
    }

    /**
     * Effect, then commit, one sync: the image is made unsynced, then the row is inserted READY (see the class
     * comment). A name taken meanwhile by a concurrent create answers as a repeat of that one.
     */
    private VolumeRecord createBlank(NewVolume request, VolumeRecord intended, VolumeShape shape, Artifact.Label label,
                                     String groupId) {
        long actual = engine.createVolume(intended.id(), intended.capacityBytes(), shape.access(), label);   // effect
        VolumeRecord row = intended.withCapacity(actual).withState(State.READY);
        try {
            var engineKeys = ReplicationParameters.engineKeys(request.mutableParameters());   // the interval is the row's
            if (!engineKeys.isEmpty()) engine.modifyVolume(row.id(), engineKeys);
            catalog.inTransaction(tx -> {                                                              // commit
                tx.volumes().insert(row);
                if (groupId != null) tx.volumeGroups().addMember(groupId, row.id());
                return null;
            });
        } catch (DuplicateNameException taken) {
            discardBlank(row.id());
            return repeatOf(request, shape);
        } catch (ReferenceException groupGone) {
            discardBlank(row.id());
            throw DomainException.notFound("volume group " + groupId + " (parameter " + PARAM_VOLUME_GROUP + ") does not exist");
        } catch (RuntimeException e) {
            // a commit whose sync failed may still have written the row: its image must then stay
            discardBlank(row.id(), () -> catalog.volumes().byId(row.id()).isEmpty());
            throw e;
        }
        return row;
    }

    private void discardBlank(String volumeId) {
        discardBlank(volumeId, () -> true);
    }

    /** Removes an image no row owns; if that fails too, the start-up sweep removes it (it holds nothing). */
    private void discardBlank(String volumeId, BooleanSupplier unowned) {
        try {
            if (unowned.getAsBoolean()) engine.deleteVolume(volumeId);
        } catch (RuntimeException ignored) {
            // swept at start-up
        }
    }

    /** The engine rounds up (whole MiB, a filesystem's minimum): the result must still fit the limit. */
    private void checkLimit(NewVolume request, VolumeShape shape, long size, long actual) {
        if (request.range().limitBytes() > 0 && actual > request.range().limitBytes()) {
            throw DomainException.outOfRange("capacity_range: limit_bytes " + request.range().limitBytes()
                    + " is below the smallest " + shape.access().kind() + " volume the " + engine.name()
                    + " engine makes of at least " + size + " bytes (" + actual + ")");
        }
    }

    private VolumeRecord existingIfCompatible(VolumeRecord v, NewVolume request, VolumeShape shape) {
        if (v.state() != State.READY) {
            throw DomainException.aborted("volume '" + v.name() + "' is being " + (v.state() == State.CREATING ? "created" : "deleted"));
        }
        List<String> differences = new ArrayList<>();
        if (!request.range().admits(v.capacityBytes()) && !request.range().equals(CapacityRange.ANY)) {
            differences.add("capacity " + v.capacityBytes() + " is outside the requested range");
        }
        if (v.kind() != shape.kind()) differences.add("it is a " + v.kind().name().toLowerCase() + " volume");
        if (shape.kind() == VolumeKind.FILESYSTEM && !VolumeShape.fsTypeOf(v).equals(shape.fsType())) {
            differences.add("its fs_type is " + VolumeShape.fsTypeOf(v));
        }
        if (!v.source().equals(request.source())) differences.add("its content source is " + describe(v.source()));
        if (!v.parameters().equals(request.parameters())) differences.add("its parameters are " + v.parameters());
        if (!differences.isEmpty()) {
            throw DomainException.exists("volume '" + v.name() + "' already exists (" + v.id() + ") but "
                    + String.join("; ", differences));
        }
        return v;
    }

    // ---- DeleteVolume ----

    public void delete(String volumeId) {
        Optional<VolumeRecord> found = lookup.toDelete(volumeId);
        if (found.isEmpty()) return;
        VolumeRecord v = found.get();
        if (v.state() == State.CREATING) throw DomainException.aborted("volume " + volumeId + " is being created");
        if (v.state() == State.DELETING) {
            finishDelete(volumeId);
            return;
        }
        if (engine.inUse(volumeId)) {
            throw DomainException.precondition("volume " + volumeId + " is staged on this node; unstage it first");
        }
        commitDelete(volumeId, tx -> {
            // in the commit only: a publish or a group may come until then, and a look before it (two more queries
            // on every delete) would only have answered a published volume's refusal before the in-use check's
            refuseDeleteWhileUsed(volumeId, tx);
            if (!tx.volumes().deleteInState(volumeId, State.READY)) {
                throw DomainException.aborted("volume " + volumeId + " changed state; retry");
            }
        });
    }

    private static void refuseDeleteWhileUsed(String volumeId, CatalogTables tables) {
        List<PublicationRecord> publications = tables.publications().ofVolume(volumeId);
        if (!publications.isEmpty()) {
            throw DomainException.precondition("volume " + volumeId + " is published to node "
                    + publications.getFirst().nodeId() + "; call ControllerUnpublishVolume first");
        }
        List<String> groups = tables.volumeGroups().groupsOf(volumeId);
        if (!groups.isEmpty()) {
            throw DomainException.precondition("volume " + volumeId + " is in volume group " + groups.getFirst()
                    + "; remove it from the group first (ModifyVolumeGroupMembership)");
        }
    }

    /**
     * Commit and effect of a delete whose intent is recorded (a DELETING row, a CREATING one rolled back); also
     * the reconciler's and DeleteVolumeGroup's way to finish one. FAILED_PRECONDITION, row untouched, while the
     * volume is attached here.
     */
    public void finishDelete(String volumeId) {
        if (engine.inUse(volumeId)) {
            throw DomainException.precondition("volume " + volumeId + " is attached on this node; unstage it first");
        }
        commitDelete(volumeId, tx -> {
            tx.publications().ofVolume(volumeId).forEach(p -> tx.publications().delete(volumeId, p.nodeId()));
            tx.volumeGroups().groupsOf(volumeId).forEach(g -> tx.volumeGroups().removeMember(g, volumeId));
            tx.volumes().delete(volumeId);
        });
    }

    /**
     * One transaction runs {@code removeRow} and records the volume's tombstone (the commit, the call's one
     * sync), then the files are unlinked unsynced. Every {@link #TOMBSTONE_BATCH} unlinks, one sync of the
     * pool's directory makes them durable and the commit also drops their tombstones.
     */
    private void commitDelete(String volumeId, Consumer<CatalogTransaction> removeRow) {
        List<String> durablyGone = List.of();
        if (unlinked.size() >= TOMBSTONE_BATCH) {
            durablyGone = drain(TOMBSTONE_BATCH);
            engine.syncDeletes();
        }
        List<String> purge = durablyGone;
        try {
            catalog.inTransaction(tx -> {                                                   // commit
                removeRow.accept(tx);
                tx.tombstones().add(volumeId);
                tx.tombstones().remove(purge);
                return null;
            });
        } catch (RuntimeException e) {
            unlinked.addAll(purge);       // synced already: dropped with a later commit
            throw e;
        }
        engine.deleteVolume(volumeId);                                                      // effect
        unlinked.add(volumeId);
    }

    private List<String> drain(int max) {
        List<String> ids = new ArrayList<>();
        for (String id; ids.size() < max && (id = unlinked.poll()) != null; ) ids.add(id);
        return ids;
    }

    /**
     * Syncs away the unlinks done so far and drops their tombstones (at close: a clean stop leaves none).
     * The reconciler does the same at start-up for whatever a crash left.
     */
    public void flushTombstones() {
        List<String> ids = drain(Integer.MAX_VALUE);
        if (ids.isEmpty()) return;
        engine.syncDeletes();
        catalog.tombstones().remove(ids);
    }

    // ---- reads ----

    /** A READY volume of this node, or NOT_FOUND (FAILED_PRECONDITION naming the owner if it is another node's). */
    public VolumeRecord readyVolume(String volumeId, String what) {
        return lookup.ready(volumeId, what);
    }

    /** The volume of this name in any state (a crash may have left it half made), if there is one. */
    /** The row of this id in any state, if any. */
    public Optional<VolumeRecord> byId(String volumeId) {
        return catalog.volumes().byId(volumeId);
    }

    public Optional<VolumeRecord> byName(String name) {
        return catalog.volumes().byName(name);
    }

    public Page<VolumeRecord> list(long afterSeq, int limit) {
        return catalog.volumes().page(afterSeq, limit);
    }

    /** As {@link #list}, with only what ListVolumes shows of each volume (a page reads fewer columns). */
    public Page<VolumeListing> listing(long afterSeq, int limit) {
        return catalog.volumes().listingPage(afterSeq, limit);
    }

    /**
     * The READY volumes of one keyset page with their status, in one query and one look at the engine for the
     * page; {@link Page#lastSeq()} continues after the rows that were left out too.
     */
    /**
     * Set once by the composition root: which replicated volumes this node holds only a secondary copy of. ListVolumes
     * leaves them out, so a merged listing names each replicated volume once, from its primary.
     */
    public void notListed(java.util.function.Predicate<String> secondaryHere) {
        this.secondaryHere = secondaryHere;
    }

    private volatile java.util.function.Predicate<String> secondaryHere = id -> false;

    public Page<ListedVolume> listReady(long afterSeq, int limit) {
        Page<VolumeListing> page = listing(afterSeq, limit);
        var hidden = secondaryHere;
        List<VolumeListing> ready = page.items().stream().filter(v -> v.state() == State.READY && !hidden.test(v.id())).toList();
        List<String> ids = ready.stream().map(VolumeListing::id).toList();
        var published = publishedNodes(ids);
        var conditions = conditions(ids);
        List<ListedVolume> listed = ready.stream().map(v -> new ListedVolume(v, new VolumeStatus(
                published.getOrDefault(v.id(), List.of()), conditions.get(v.id())))).toList();
        return new Page<>(listed, page.lastSeq(), page.more());
    }

    /** What ControllerGetVolume shows of a READY volume's use and health. */
    public VolumeStatus status(String volumeId) {
        return new VolumeStatus(publishedNodes(volumeId), condition(volumeId));
    }

    /** The bytes the volume's artifact takes in the pool now (what a reclaim gives back is the difference). */
    public long allocatedBytes(String volumeId) {
        return engine.capability(SpaceReclaimer.class)
                .orElseThrow(() -> StorageException.unsupported("the " + engine.name() + " engine cannot tell what a volume takes"))
                .allocatedBytes(volumeId);
    }

    public Optional<String> condition(String volumeId) {
        return engine.volumeCondition(volumeId).or(capacity::poolCondition).or(() -> replicaCondition.apply(volumeId));
    }

    /** What a replicated volume's copy here says of itself (a failover), asked after the engine's and the pool's. */
    public void replicaCondition(java.util.function.Function<String, Optional<String>> condition) {
        this.replicaCondition = condition;
    }

    private volatile java.util.function.Function<String, Optional<String>> replicaCondition = id -> Optional.empty();

    /** What a replicated volume's copy here says of itself (a failover, a secondary left behind), if anything. */
    public Optional<String> replicaConditionOf(String volumeId) {
        return replicaCondition.apply(volumeId);
    }

    /** Why every volume of the pool is at risk now (a thin pool image whose backing filesystem is too full), if it is. */
    public Optional<String> poolCondition() {
        return capacity.poolCondition();
    }

    public List<String> publishedNodes(String volumeId) {
        return catalog.publications().ofVolume(volumeId).stream().map(PublicationRecord::nodeId).toList();
    }

    /** {@link #condition} of a page of volumes, in one look at the engine. */
    public Map<String, Optional<String>> conditions(List<String> volumeIds) {
        Map<String, Optional<String>> conditions = engine.volumeConditions(volumeIds);
        Optional<String> pool = volumeIds.isEmpty() ? Optional.empty() : capacity.poolCondition();   // one reading per page
        var replica = replicaCondition;
        Map<String, Optional<String>> merged = new HashMap<>(conditions);
        merged.replaceAll((id, condition) -> condition.or(() -> pool).or(() -> replica.apply(id)));
        return merged;
    }

    /** {@link #publishedNodes} of a page of volumes, in one query; volumes published nowhere are absent. */
    public Map<String, List<String>> publishedNodes(List<String> volumeIds) {
        return catalog.publications().nodesOf(volumeIds);
    }

    /** Why these capabilities can't be served by this volume, or empty if they can. */
    public Optional<String> unsupported(VolumeRecord v, List<Capability> capabilities) {
        for (Capability c : capabilities) {
            if (c.mode().multiNode()) return Optional.of("access mode " + c.mode() + " needs more than one node");
            if (c.kind() != v.kind()) return Optional.of("volume is " + v.kind().name().toLowerCase() + ", not " + c.kind().name().toLowerCase());
            if (c.kind() == VolumeKind.FILESYSTEM && !c.fsType().isEmpty() && !c.fsType().equals(VolumeShape.fsTypeOf(v))) {
                return Optional.of("volume's fs_type is " + VolumeShape.fsTypeOf(v) + ", not " + c.fsType());
            }
        }
        return Optional.empty();
    }

    /**
     * Why ValidateVolumeCapabilities does not confirm what it was asked of a READY volume, or empty if it does:
     * everything asked must hold, the capabilities, the parameters and the volume's own context.
     */
    public Optional<String> unconfirmed(String volumeId, List<Capability> capabilities, Map<String, String> parameters,
                                        Map<String, String> mutableParameters, Map<String, String> volumeContext) {
        VolumeRecord v = readyVolume(volumeId, "volume");
        Map<String, String> context = v.context();
        return unsupported(v, capabilities)
                .or(() -> unsupportedParameters(parameters, mutableParameters))
                .or(() -> volumeContext.isEmpty() || volumeContext.equals(context) ? Optional.empty()
                        : Optional.of("volume_context " + volumeContext + " is not this volume's " + context));
    }

    /** Why these creation parameters would not be accepted (ValidateVolumeCapabilities), or empty if they would. */
    public Optional<String> unsupportedParameters(Map<String, String> parameters, Map<String, String> mutableParameters) {
        try {
            validateParameters(parameters);
            if (!mutableParameters.isEmpty()) {
                var engineKeys = ReplicationParameters.checkCreate(parameters, mutableParameters);
                MutableParameters.validate(engineKeys);
                engine.checkMutableParameters(engineKeys);   // what CreateVolume would refuse is not confirmed
            }
            return Optional.empty();
        } catch (DomainException | StorageException e) {
            return Optional.of(e.getMessage());
        }
    }

    // ---- ControllerExpandVolume ----

    public record Expansion(long capacityBytes, boolean nodeExpansionRequired) {}

    /** Grows a READY volume; a capability, when one is given, must be one the volume serves (INVALID_ARGUMENT). */
    public Expansion expand(String volumeId, CapacityRange range, Optional<Capability> capability) {
        VolumeRecord v = readyVolume(volumeId, "volume");                  // read once, for the check and the growth
        capability.ifPresent(c -> unsupported(v, List.of(c)).ifPresent(why -> { throw DomainException.invalid(why); }));
        return expand(v, range);
    }

    public Expansion expand(String volumeId, CapacityRange range) {
        return expand(readyVolume(volumeId, "volume"), range);
    }

    private Expansion expand(VolumeRecord v, CapacityRange range) {
        String volumeId = v.id();
        if (range.limitBytes() > 0 && range.limitBytes() < v.capacityBytes()) {
            throw DomainException.outOfRange("limit_bytes " + range.limitBytes() + " is below the volume's size "
                    + v.capacityBytes() + "; volumes cannot shrink");
        }
        boolean nodeSide = v.kind() == VolumeKind.FILESYSTEM;
        Optional<Preallocation> thick = Provisioning.of(v.parameters(), engine);
        if (range.requiredBytes() <= v.capacityBytes()) {
            // a thick expansion cut short after the image grew (the row took its size at start-up) is filled by the retry
            thick.ifPresent(t -> t.expand(volumeId, v.capacityBytes()));
            return new Expansion(v.capacityBytes(), nodeSide);
        }
        long target = range.resolve(config.defaultVolumeBytes(), v.capacityBytes());
        checkSpace(target - v.capacityBytes());
        thick.ifPresent(t -> requireThick(t, target - v.capacityBytes()));
        // idempotent: a repeat after a crash converges (a thick one also fills what the crash left unfilled)
        long grown = thick.isPresent() ? thick.get().expand(volumeId, target) : engine.expandVolume(volumeId, target);
        catalog.volumes().setCapacity(volumeId, grown);
        return new Expansion(grown, nodeSide);
    }

    // ---- ControllerModifyVolume ----

    public void modify(String volumeId, Map<String, String> mutableParameters) {
        VolumeRecord v = readyVolume(volumeId, "volume");
        // nothing to change: "SPs MUST NOT modify volumes based on the absence of keys"
        if (mutableParameters.isEmpty()) return;
        // the replication keys are this layer's (docs/replication.md, "Modify"); the rest is the engine's
        ReplicationParameters.checkModify(v.parameters(), mutableParameters);
        var engineKeys = new HashMap<>(mutableParameters);
        engineKeys.remove(ReplicationParameters.INTERVAL);
        if (!engineKeys.isEmpty()) {
            MutableParameters.validate(engineKeys);
            engine.modifyVolume(volumeId, engineKeys);
        }
        var merged = new HashMap<>(v.mutableParameters());
        merged.putAll(mutableParameters);
        catalog.volumes().setMutableParameters(volumeId, merged);
    }

    // ---- ControllerPublish/Unpublish (bookkeeping: the node side attaches) ----

    public Map<String, String> publish(String volumeId, String nodeId, Capability capability, boolean readOnly) {
        VolumeRecord v = readyVolume(volumeId, "volume");
        if (!nodeId.equals(config.nodeId())) {
            throw DomainException.notFound("node " + nodeId + " does not exist for this plugin (it serves node "
                    + config.nodeId() + ")");
        }
        unsupported(v, List.of(capability)).ifPresent(why -> { throw DomainException.invalid(why); });
        var existing = catalog.publications().get(volumeId, nodeId);
        if (existing.isPresent()) {
            var p = existing.get();
            if (p.readOnly() != readOnly || !p.accessMode().equals(capability.mode().name())) {
                throw DomainException.exists("volume " + volumeId + " is already published to node " + nodeId
                        + " with readonly=" + p.readOnly() + " and access mode " + p.accessMode());
            }
            return p.publishContext();
        }
        if (config.maxVolumesPerNode() > 0 && catalog.publications().onNode(nodeId).size() >= config.maxVolumesPerNode()) {
            throw DomainException.exhausted("node " + nodeId + " already has the maximum of "
                    + config.maxVolumesPerNode() + " volumes published");
        }
        var publication = new PublicationRecord(volumeId, nodeId, readOnly, capability.mode().name(), Map.of(), clock.instant());
        try {
            catalog.publications().insert(publication);
        } catch (ReferenceException deletedMeanwhile) {
            // DeleteVolumeGroup deletes member volumes under the group's key, not the volume's
            throw DomainException.notFound("volume " + volumeId + " does not exist");
        }
        return publication.publishContext();
    }

    public void unpublish(String volumeId, String nodeId) {
        if (ObjectId.parse(Kind.VOLUME, volumeId).isEmpty() && !ReplicatedVolumeId.isReplicated(volumeId)) return;
        if (nodeId.isEmpty()) {
            catalog.publications().ofVolume(volumeId).forEach(p -> catalog.publications().delete(volumeId, p.nodeId()));
        } else {
            catalog.publications().delete(volumeId, nodeId);
        }
    }

    // ---- GetCapacity ----

    public long availableCapacity(List<Capability> capabilities) {
        for (Capability c : capabilities) {
            if (c.mode().multiNode() || (c.kind() == VolumeKind.BLOCK && !engine.supportsBlock())) return 0;
        }
        return capacity.allocatable();
    }

    public long maximumVolumeSize() {
        return capacity.allocatable();
    }

    // ---- shared checks ----

    private void validateParameters(Map<String, String> parameters) {
        validateParameters(parameters, false);
    }

    /** {@code replica}: the primary's volume of a replicated volume, made by the cluster controller's request. */
    private void validateParameters(Map<String, String> parameters, boolean replica) {
        var unknown = new TreeSet<String>();
        for (String key : parameters.keySet()) {
            if (!KNOWN_PARAMETERS.contains(key) && !key.startsWith(KUBERNETES_PREFIX)) unknown.add(key);
        }
        if (!unknown.isEmpty()) {
            throw DomainException.invalid("unknown parameters " + unknown + "; known: " + new TreeSet<>(KNOWN_PARAMETERS)
                    + " and keys starting with " + KUBERNETES_PREFIX);
        }
        Provisioning.of(parameters, engine);   // a value other than thin or thick, or thick where the engine has none
        var replication = ReplicationParameters.of(parameters);              // INVALID for a bad value
        if (replication.replicated() && !replica) {
            // One node cannot hold replicas on distinct nodes: as a request for more room than exists.
            throw DomainException.exhausted(ReplicationParameters.REPLICAS + "=" + replication.replicas()
                    + " needs " + replication.replicas() + " distinct nodes; this plugin holds volumes on node '"
                    + config.nodeId() + "' only, replicated volumes are made by a cluster"
                    + " controller (docs/replication.md)");
        }
    }

    private void checkTopology(NewVolume request) {
        request.allowedNodes().ifPresent(nodes -> {
            if (!nodes.contains(config.topologyValue())) {
                throw DomainException.exhausted("accessibility requirements allow nodes " + nodes
                        + " but this plugin provisions on node " + config.nodeId());
            }
        });
    }

    private void checkSpace(long bytes) {
        capacity.require(bytes);
    }

    /** Before anything is written: the space really free, in the pool and beneath a thin pool image. */
    private void requireThick(Preallocation thick, long bytes) {
        capacity.requireThick(bytes);
        thick.requireRoom(bytes);
    }


    private VolumeGroupRecord readyGroupWithRoom(String groupId) {
        var g = catalog.volumeGroups().byId(groupId).filter(r -> r.state() == State.READY)
                .orElseThrow(() -> DomainException.notFound("volume group " + groupId + " (parameter "
                        + PARAM_VOLUME_GROUP + ") does not exist"));
        if (catalog.volumeGroups().members(groupId).size() >= config.maxGroupMembers()) {
            throw DomainException.exhausted("volume group " + groupId + " already has the maximum of "
                    + config.maxGroupMembers() + " members");
        }
        return g;
    }

    private static String describe(ContentSource source) {
        return switch (source) {
            case ContentSource.None none -> "empty";
            case ContentSource.FromSnapshot s -> "snapshot " + s.snapshotId();
            case ContentSource.FromVolume v -> "volume " + v.volumeId();
        };
    }
}
