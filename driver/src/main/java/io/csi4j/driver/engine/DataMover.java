package io.csi4j.driver.engine;

import java.util.List;

/**
 * Capability: volumes move between nodes. This node sends an artifact's bytes ({@link #openSource}) and makes a
 * volume of bytes that arrive from another ({@link #beginImport}), keeping copies of other nodes' snapshots
 * ({@link Replica}) so that a later copy of the same volume only sends what changed.
 */
public interface DataMover extends Capability {

    /**
     * A stable image of the snapshot, or of the volume cut now (frozen if mounted here), to send; the caller closes
     * it, which removes a cut. NOT_FOUND without the artifact. Nothing visible in the pool changes.
     */
    SourceImage openSource(Artifact.Kind kind, String id);

    /**
     * Starts a volume made of {@code sourceBytes} that arrive from another node, grown to {@code capacityBytes}
     * (0: the source's size; smaller: OUT_OF_RANGE), its size promised to the pool now (NO_SPACE). It starts as the
     * content of {@code base} when given (a replica, or a still copy of the volume's own image: then only changed ranges
     * need writing), else as zeros. It is
     * invisible until {@link ImageImport#commit}, which makes it durable and keeps it as replica {@code keepAs} when
     * given; closing it uncommitted leaves nothing behind. Commit never replaces an image in use: while the volume is
     * staged or published on this node it is IN_USE and keeps nothing, decided atomically with respect to a stage
     * (a stage either is seen, or attaches the new image).
     */
    ImageImport beginImport(String volumeId, long sourceBytes, long capacityBytes, AccessType access, String sourceRef,
                            Artifact.Label label, ImportBase base, Replica keepAs);

    /** The copies of other nodes' snapshots this pool keeps; empty where the pool cannot reflink. Reads only. */
    List<Replica> replicas();

    /**
     * When this pool kept {@code replica}: a replica is written once, as it is kept (the round that received its point
     * committed, or a handoff kept its final point; a round applied in place writes the held replica and renames it to
     * the new point, {@link InPlaceApply}, and sets this time then), so this orders a volume's replicas from oldest to newest (the
     * wall clock's: a clock stepped back can misorder them, which only costs a resync by checksums more chunks).
     * NOT_FOUND without the replica. Reads only.
     */
    java.time.Instant keptAt(Replica replica);

    /** Removes every replica of {@code sourceVolumeId} (its volume was deleted), durably. */
    void dropReplicas(String sourceVolumeId);

    /**
     * Keeps this pool's own snapshot {@code snapshotId} of {@code volumeId} as that volume's replica (a reflink),
     * durably, then drops the volume's other replicas, durably: an old primary that handed over keeps the point its
     * successor pulled, the common base of its next round. False where the pool keeps no replicas (nothing changed).
     */
    boolean keepSnapshotAsReplica(String volumeId, String snapshotId);

    /** Removes this one replica, durably; nothing when absent. */
    void dropReplica(Replica replica);

    /**
     * The replica's image to read (a receiver hashing the old point it holds for a resync by checksums); the caller
     * closes it. NOT_FOUND without the replica. Reads only.
     */
    SourceImage openReplica(Replica replica);

    /**
     * A still copy of the volume's own image (a reflink), taken under the volume's lock while no loop device backs the
     * image (IN_USE otherwise: staged or published here), to hash and then to build from ({@link StillImage}); the
     * caller closes it. Empty where the pool cannot reflink. NOT_FOUND without the volume. The volume is not changed.
     */
    java.util.Optional<StillImage> stillImage(String volumeId);
}
