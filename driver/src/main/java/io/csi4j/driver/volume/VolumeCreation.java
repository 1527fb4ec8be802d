package io.csi4j.driver.volume;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.catalog.DuplicateNameException;
import io.csi4j.driver.catalog.ReferenceException;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.ImageImport;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.engine.Preallocation;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ObjectId.Kind;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeGroupRecord;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.storage.StorageException;
import java.time.InstantSource;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * CreateVolume: blank, a clone, a restore, a copy of another node's data, and a replicated volume's primary. Every
 * rule ({@link VolumeRules}, room, the group's) is checked before anything is written, a repeat by name answers
 * with the existing volume, and each kind is one crash-safe protocol (docs/design.md, "Crash protocol"):
 * <ul>
 *   <li>A blank volume: effect, then commit. The engine makes the image without syncing, then one
 *       transaction inserts the row READY: the call's one sync. A crash before the commit leaves an image
 *       that holds nothing and no row owns (swept at start-up); a power cut after it may lose the image,
 *       which the reconciler re-makes from the row (a blank volume is derivable from it).</li>
 *   <li>A clone, a restore, a copy or a thick volume: intent, effect, commit. The row is written CREATING, the
 *       artifact is made durable, then the row becomes READY; the reconciler rolls back a CREATING row.</li>
 * </ul>
 */
public final class VolumeCreation {
    private final Catalog catalog;
    private final PoolStorage engine;
    private final PoolCapacity capacity;
    private final DriverConfig config;
    private final InstantSource clock;
    private final VolumeRules rules;
    private final VolumeReads reads;
    private final VolumeDeletion deletion;
    private final Lookup<SnapshotRecord> snapshotLookup;

    VolumeCreation(Catalog catalog, PoolStorage engine, PoolCapacity capacity, DriverConfig config, InstantSource clock,
                   VolumeRules rules, VolumeReads reads, VolumeDeletion deletion) {
        this.catalog = catalog;
        this.engine = engine;
        this.capacity = capacity;
        this.config = config;
        this.clock = clock;
        this.rules = rules;
        this.reads = reads;
        this.deletion = deletion;
        this.snapshotLookup = Lookup.coSnapshots(catalog, config.nodeId());    // a point is no CO's source
    }

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
        rules.checkParameters(request.parameters(), givenId != null);
        VolumeShape shape = VolumeShape.requested(request.capabilities(), engine);
        rules.checkTopology(request);

        Optional<VolumeRecord> existing = catalog.volumes().byName(request.name());
        if (existing.isPresent()) return VolumeRules.existingIfCompatible(existing.get(), request, shape);

        long floor = switch (request.source()) {
            case ContentSource.None none -> 0;
            case ContentSource.FromSnapshot s -> snapshotLookup.ready(s.snapshotId(), "source snapshot").sizeBytes();
            case ContentSource.FromVolume v -> reads.readyVolume(v.volumeId(), "source volume").capacityBytes();
        };
        long size = request.range().resolve(config.defaultVolumeBytes(), floor);
        String groupId = request.parameters().get(VolumeRules.PARAM_VOLUME_GROUP);
        var row = intendedRow(request, shape, size, groupId, givenId);
        var label = new Artifact.Label(row.name(), "");                        // in the sidecar, for fsck --rebuild
        Optional<Preallocation> thick = Provisioning.of(request.parameters(), engine);
        if (request.source() instanceof ContentSource.None) {
            checkLimit(request, shape, size, engine.blankSize(size, shape.access()));   // before anything is written
            if (thick.isEmpty()) return createBlank(request, row, shape, label, groupId);
            capacity.requireThick(thick.get(), engine.blankSize(size, shape.access()));
        } else {
            thick.ifPresent(t -> capacity.requireThick(t, size));
        }
        // a thick volume's fill takes long and a blank one is not derivable from its row: intent, effect, commit
        catalog.volumes().insert(row);                                         // intent
        return effectThenCommit(request, shape, row, groupId, () -> thickened(thick, row.id(), request.source(), switch (request.source()) {
            case ContentSource.None none -> engine.createVolume(row.id(), size, shape.access(), label);
            case ContentSource.FromSnapshot s -> engine.restoreSnapshot(row.id(), s.snapshotId(), size, shape.access(), label);
            case ContentSource.FromVolume v -> engine.cloneVolume(row.id(), v.volumeId(), size, shape.access(), label);
        }));
    }

    /** The volume a repeat of this CreateVolume answers with, if one of its name exists (ALREADY_EXISTS if it differs). */
    public Optional<VolumeRecord> existing(NewVolume request) {
        rules.checkParameters(request.parameters(), false);
        VolumeShape shape = VolumeShape.requested(request.capabilities(), engine);
        rules.checkTopology(request);
        return catalog.volumes().byName(request.name()).map(v -> VolumeRules.existingIfCompatible(v, request, shape));
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
        rules.checkParameters(request.parameters(), false);
        VolumeShape shape = VolumeShape.requested(request.capabilities(), engine);
        rules.checkTopology(request);
        Optional<VolumeRecord> existing = catalog.volumes().byName(request.name());
        if (existing.isPresent()) return VolumeRules.existingIfCompatible(existing.get(), request, shape);
        if (request.source() instanceof ContentSource.None) throw new IllegalArgumentException("a copy needs a content source");

        long size = request.range().resolve(config.defaultVolumeBytes(), incoming.sourceBytes());
        String groupId = request.parameters().get(VolumeRules.PARAM_VOLUME_GROUP);
        Optional<Preallocation> thick = Provisioning.of(request.parameters(), engine);
        var row = intendedRow(request, shape, size, groupId, null);
        thick.ifPresent(t -> capacity.requireThick(t, size));
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

    /** A thick volume's image filled after it was made ({@code size}, returned): a blank one marked as a fresh fill. */
    private static long thickened(Optional<Preallocation> thick, String volumeId, ContentSource source, long size) {
        thick.ifPresent(t -> t.fill(volumeId, source instanceof ContentSource.None));
        return size;
    }

    /** The rules checked before anything is written (room, mutable parameters, the group), and the CREATING row. */
    private VolumeRecord intendedRow(NewVolume request, VolumeShape shape, long size, String groupId, String givenId) {
        capacity.require(size);
        rules.checkMutableParameters(request.parameters(), request.mutableParameters());
        if (groupId != null) readyGroupWithRoom(groupId);
        var now = clock.instant();
        String id = givenId != null ? givenId : ObjectId.generate(Kind.VOLUME, config.nodeId()).toString();
        return new VolumeRecord(id, request.name(), size,
                shape.kind(), shape.fsType(), request.parameters(), request.mutableParameters(), request.source(),
                config.nodeId(), State.CREATING, now, now);
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
        }, () -> deletion.finishDelete(row.id()), actual -> commitCreated(row.id(), row.capacityBytes(), actual, groupId));
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
            throw DomainException.notFound("volume group " + groupId + " (parameter " + VolumeRules.PARAM_VOLUME_GROUP + ") does not exist");
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

    /** The answer to a create whose name a concurrent create took meanwhile: that volume, if it is compatible. */
    private VolumeRecord repeatOf(NewVolume request, VolumeShape shape) {
        return VolumeRules.existingIfCompatible(catalog.volumes().byName(request.name()).orElseThrow(() ->
                DomainException.aborted("volume '" + request.name() + "' is being created and deleted; retry")), request, shape);
    }

    /** The engine rounds up (whole MiB, a filesystem's minimum): the result must still fit the limit. */
    private void checkLimit(NewVolume request, VolumeShape shape, long size, long actual) {
        if (request.range().limitBytes() > 0 && actual > request.range().limitBytes()) {
            throw DomainException.outOfRange("capacity_range: limit_bytes " + request.range().limitBytes()
                    + " is below the smallest " + shape.access().kind() + " volume the " + engine.name()
                    + " engine makes of at least " + size + " bytes (" + actual + ")");
        }
    }

    private VolumeGroupRecord readyGroupWithRoom(String groupId) {
        var g = catalog.volumeGroups().byId(groupId).filter(r -> r.state() == State.READY)
                .orElseThrow(() -> DomainException.notFound("volume group " + groupId + " (parameter "
                        + VolumeRules.PARAM_VOLUME_GROUP + ") does not exist"));
        if (catalog.volumeGroups().members(groupId).size() >= config.maxGroupMembers()) {
            throw DomainException.exhausted("volume group " + groupId + " already has the maximum of "
                    + config.maxGroupMembers() + " members");
        }
        return g;
    }
}
