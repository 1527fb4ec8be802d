package io.csi4j.driver.engine;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The engine's core: volumes and snapshots as artifacts in a pool and their lifecycle (create, restore, clone,
 * expand, snapshot, delete, list, capacity), which every engine has; what the controller's domain rules
 * ({@code Volumes}, {@code Snapshots}, groups) need and all they may touch. Open, so that the rules can be
 * tested against an engine held in memory; {@link StorageEngine} is the real one. Everything an engine may or may
 * not offer (the node side, block maps, moving data, reclaiming space, holding a freeze) is a {@link Capability}
 * found by {@link #capability}, never a flag beside a method that throws.
 *
 * <p>Contract, for every method: idempotent (a repeat after success, or after a crash at any
 * instant, converges to the same end state), atomic from the outside (an artifact appears under
 * its final name only when complete: temp name + rename + fsync of the directory, its sidecar
 * written before; the two exceptions, a blank volume's create and a volume's delete, are durable
 * through the caller's catalog commit instead, see there), and safe with any id: an id that is not a plain
 * safe file name is refused with INVALID before it becomes a path, and nothing outside the pool is touched
 * through a symlink. Errors are {@code StorageException}s with a reason (ENOSPC -> NO_SPACE, missing
 * source -> NOT_FOUND, attached or mounted -> IN_USE, held by a concurrent call -> BUSY, else FAILED
 * with the call and path); the CSI layer picks the status code.
 */
public interface PoolStorage extends AutoCloseable {

    /** "image" or "dir". */
    String name();

    /** The pool's capacity: its size, what is free, what is promised to volumes, the largest volume makeable now. */
    PoolInfo pool();

    /** What the plugin should say at start-up about this engine and its pool (e.g. no reflink). */
    List<String> notices();

    /** What volumes this engine makes: checked before any row or artifact is written. No I/O. */
    EngineCapabilities capabilities();

    default boolean supportsBlock() {
        return capabilities().block();
    }

    /**
     * The size {@link #createVolume} makes of a request (rounded up to the engine's granularity and the
     * filesystem's minimum); INVALID for an access type it cannot make. Nothing is written.
     */
    long blankSize(long capacityBytes, AccessType access);

    /** INVALID for a mutable parameter, or a value, that this engine cannot apply on this pool. Nothing is written. */
    void checkMutableParameters(Map<String, String> mutableParameters);

    // ---- controller side: artifacts in the pool ----

    /**
     * Creates an empty volume of at least {@code capacityBytes} (rounded up to the engine's
     * granularity and the filesystem's minimum; returned). Repeating with the same id and size is OK;
     * another size is EXISTS; more than the pool can promise is NO_SPACE.
     *
     * <p>Nothing is synced: a blank volume is derivable from its catalog row, so the row's commit is the
     * whole protocol. A crash before the commit leaves an artifact that holds no data and that no row owns
     * (swept at start-up, {@link #holdsData}); a power cut after it may lose the artifact, which the start-up
     * reconciler re-makes from the row ({@link #ensureBlankVolume}). The node side makes the artifact
     * durable before anything is written into it (at stage or publish).
     */
    long createVolume(String volumeId, long capacityBytes, AccessType access, Artifact.Label label);

    /**
     * Creates a volume holding the snapshot's content, grown to {@code capacityBytes} if larger
     * (0: the snapshot's size; smaller than the snapshot: OUT_OF_RANGE).
     */
    long restoreSnapshot(String volumeId, String snapshotId, long capacityBytes, AccessType access, Artifact.Label label);

    /** Creates a volume holding the source volume's content (crash-consistent: frozen if mounted here). */
    long cloneVolume(String volumeId, String sourceVolumeId, long capacityBytes, AccessType access, Artifact.Label label);

    /**
     * Removes the volume's artifact; OK if it is already gone; IN_USE while it is in use here.
     * Not synced: the caller commits a tombstone first (or owns the artifact through no row at all), and
     * makes many deletes durable at once with {@link #syncDeletes}.
     */
    void deleteVolume(String volumeId);

    /** Makes every {@link #deleteVolume} done so far durable (one sync of the pool's volume directory). */
    void syncDeletes();

    /**
     * Makes a blank volume's artifact from its row, durably, if a power cut lost it (or its size or its
     * sidecar) after an unsynced {@link #createVolume}; true if anything had to be made. A present artifact's
     * content is kept.
     */
    boolean ensureBlankVolume(String volumeId, long sizeBytes, AccessType access, Artifact.Label label);

    /**
     * Whether anything was ever written into the artifact (allocated blocks, directory entries). One that
     * holds nothing and that no row owns is what a create cut short leaves: sweeping it loses nothing.
     */
    boolean holdsData(Artifact.Kind kind, String id);

    /** True while the volume is attached on this node (staged or published), so it must not be deleted. */
    boolean inUse(String volumeId);

    /**
     * Grows the artifact (and, if attached, the loop capacity) durably; never shrinks, so a repeat returns the size
     * it has. NOT_FOUND without the volume; NO_SPACE beyond what the pool can promise. Returns the new size.
     */
    long expandVolume(String volumeId, long newCapacityBytes);

    /**
     * Cuts a snapshot; a mounted filesystem volume is frozen around the cut. A repeat of a complete one is OK;
     * one of another volume under this id is EXISTS; NOT_FOUND without the volume. Returns its size.
     */
    long createSnapshot(String snapshotId, String volumeId, Artifact.Label label);

    /**
     * Cuts one snapshot per entry (snapshot id -> volume id), write-order consistent across all:
     * freeze every mounted member, cut all, thaw all (always, also on error). On failure no
     * member snapshot is left behind. Returns snapshot id -> size.
     *
     * <p>With a {@code held} hold (null: none) the members are frozen already, as part of a group snapshot
     * that spans nodes, and the cut takes no freeze of its own. BUSY when the hold was released before the
     * cut; INVALID when it does not cover every member.
     */
    Map<String, Long> createGroupSnapshot(Map<String, String> snapshotToVolume, Artifact.Label label, FreezeHold held);

    /** Removes the snapshot's artifact durably; OK when it is gone already. */
    void deleteSnapshot(String snapshotId);

    /**
     * Applies mutable parameters (ControllerModifyVolume): {@code readAheadKiB} to the attached
     * device now (the caller keeps the value and passes it at every later stage), {@code compression}
     * on btrfs pools. Validates every key first and applies nothing if one is unsupported
     * (INVALID naming it and the known ones).
     */
    void modifyVolume(String volumeId, Map<String, String> mutableParameters);

    /** Empty when healthy; else why not (artifact missing, filesystem read-only after errors ...). Reads only. */
    Optional<String> volumeCondition(String volumeId);

    /**
     * {@link #volumeCondition} of many volumes (a page of ListVolumes); an engine answers it with one look at
     * what is shared (mount table, loop devices) instead of one per volume. Every id is in the result.
     */
    default Map<String, Optional<String>> volumeConditions(List<String> volumeIds) {
        Map<String, Optional<String>> conditions = new HashMap<>();
        for (String id : volumeIds) conditions.put(id, volumeCondition(id));
        return conditions;
    }

    /** Ids of every volume artifact on disk (for the reconciler's orphan report). */
    Set<String> volumeArtifacts();

    Set<String> snapshotArtifacts();

    /** What the artifact's sidecar says about it (for an fsck that rebuilds the catalog from disk). */
    Optional<Artifact> artifact(Artifact.Kind kind, String id);

    /**
     * Removes leftovers of interrupted work (temp files, sidecars whose artifact never appeared);
     * returns what was removed. Call at start-up, before serving.
     */
    List<Path> removeTemporaryArtifacts();

    /**
     * The capability of this type when the engine offers it ({@link Capability}: {@link NodeStorage},
     * {@link SnapshotRanges}, {@link DataMover}, {@link SpaceReclaimer}, {@link Freezer} ...), else empty; the
     * caller then raises the error it gives for an engine that cannot. The same instance on every call; no I/O.
     */
    <C extends Capability> Optional<C> capability(Class<C> type);

    @Override
    void close();
}
