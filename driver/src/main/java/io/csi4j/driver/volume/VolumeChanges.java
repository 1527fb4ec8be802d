package io.csi4j.driver.volume;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.ImageImport;
import io.csi4j.driver.engine.ImportBase;
import io.csi4j.driver.engine.InPlaceApply;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.engine.Preallocation;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.model.VolumeKind;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.storage.StorageException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Consumer;

/**
 * What changes a READY volume in place: its size (ControllerExpandVolume), its mutable parameters
 * (ControllerModifyVolume), and a replicated volume's secondary copy (a new complete point). Each is effect, then the
 * row: the artifact changes first and idempotently, so a crash in between leaves an artifact ahead of its row, which
 * a retry or the reconciler brings level (docs/design.md, "Crash protocol").
 */
public final class VolumeChanges {
    private final Catalog catalog;
    private final PoolStorage engine;
    private final PoolCapacity capacity;
    private final DriverConfig config;
    private final VolumeReads reads;

    VolumeChanges(Catalog catalog, PoolStorage engine, PoolCapacity capacity, DriverConfig config, VolumeReads reads) {
        this.catalog = catalog;
        this.engine = engine;
        this.capacity = capacity;
        this.config = config;
        this.reads = reads;
    }

    public record Expansion(long capacityBytes, boolean nodeExpansionRequired) {}

    /** Grows a READY volume; a capability, when one is given, must be one the volume serves (INVALID_ARGUMENT). */
    public Expansion expand(String volumeId, CapacityRange range, Optional<Capability> capability) {
        VolumeRecord v = reads.readyVolume(volumeId, "volume");            // read once, for the check and the growth
        capability.ifPresent(c -> VolumeRules.requireSupported(v, c));
        return expand(v, range);
    }

    public Expansion expand(String volumeId, CapacityRange range) {
        return expand(reads.readyVolume(volumeId, "volume"), range);
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
        capacity.require(target - v.capacityBytes());
        thick.ifPresent(t -> capacity.requireThick(t, target - v.capacityBytes()));
        // idempotent: a repeat after a crash converges (a thick one also fills what the crash left unfilled)
        long grown = thick.isPresent() ? thick.get().expand(volumeId, target) : engine.expandVolume(volumeId, target);
        catalog.volumes().setCapacity(volumeId, grown);
        return new Expansion(grown, nodeSide);
    }

    /** ControllerModifyVolume: the replication keys are this layer's, the rest the engine applies; then the row. */
    public void modify(String volumeId, Map<String, String> mutableParameters) {
        VolumeRecord v = reads.readyVolume(volumeId, "volume");
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

    /**
     * A replicated volume's secondary copy replaced by a new complete point (docs/replication.md): a new image is
     * built beside the old one (a reflink of {@code base} when given: a replica, or a still copy of this image, plus what {@code incoming} writes),
     * synced, kept as the replica {@code keepAs} and renamed over the old image, so the copy is always one complete
     * point. NOT_FOUND when the volume is gone: a round never recreates a deleted volume. The caller holds the
     * volume's replication lock and has checked that this copy is not writable here. A read-only stage is allowed
     * meanwhile: the look below only fails fast, the engine's commit looks again atomically with its rename (a stage
     * before it refuses the replacement, FAILED_PRECONDITION; one after attaches the new image).
     */
    public void replaceImage(String volumeId, long sourceBytes, ImportBase base, Replica keepAs, Consumer<ImageImport> fill) {
        replaceImage(volumeId, sourceBytes, base, keepAs, OptionalLong.empty(), fill);
    }

    /**
     * As above; with {@code inPlaceDelta} (the bytes the round sends, when {@code base} is the point this copy holds:
     * neither a full copy nor a resync by checksums) the round is applied to the image in place under a journal where
     * the engine can ({@link InPlaceApply}, docs/inplace-rounds.md section 1), else built beside as above. Either way the
     * copy is one complete point once this returns, and after start-up's replay if it does not. True when the round
     * went the in-place way (journaled; the engine logs the rare build beside from the journal at commit).
     */
    public boolean replaceImage(String volumeId, long sourceBytes, ImportBase base, Replica keepAs, OptionalLong inPlaceDelta,
                                Consumer<ImageImport> fill) {
        VolumeRecord v = reads.readyVolume(volumeId, "volume");
        if (engine.inUse(volumeId)) {
            throw DomainException.precondition("volume " + volumeId + " is staged on this node; its copy cannot be replaced");
        }
        DataMover mover = engine.capability(DataMover.class).orElseThrow(() -> StorageException.unsupported(
                "the " + engine.name() + " engine cannot replicate volumes"));
        long capacityBytes = Math.max(v.capacityBytes(), sourceBytes);
        var access = VolumeShape.accessOf(v);
        var label = new Artifact.Label(v.name(), "");
        Optional<ImageImport> inPlace = inPlaceDelta.isPresent() && base instanceof Replica held && keepAs != null
                ? engine.capability(InPlaceApply.class).flatMap(a -> a.beginInPlace(volumeId, sourceBytes, capacityBytes, access,
                        Artifact.volumeSource(volumeId), label, held, keepAs, inPlaceDelta.getAsLong()))
                : Optional.empty();
        try (var target = inPlace.orElseGet(() -> mover.beginImport(volumeId, sourceBytes, capacityBytes, access,
                Artifact.volumeSource(volumeId), label, base, keepAs))) {
            fill.accept(target);
            target.commit();
        }
        // the primary was expanded since the point this copy held: the copy follows (its image already has the size), so
        // a handoff or failover serves the expanded capacity. After the image: a crash between is repaired by the next round.
        if (sourceBytes > v.capacityBytes()) catalog.volumes().setCapacity(volumeId, sourceBytes);
        return inPlace.isPresent();
    }
}
