package io.csi4j.driver.engine;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Where volume and snapshot bytes live. Two implementations: {@code ImageEngine} (sparse image
 * files attached through loop devices, reflink snapshots) and {@code DirEngine} (directories).
 *
 * <p>Contract, for every method: idempotent (a repeat after success, or after a crash at any
 * instant, converges to the same end state), atomic from the outside (an artifact appears
 * under its final name only when complete: temp name + rename + fsync of the directory), and
 * ids are already validated {@code ObjectId}s (the engine still refuses any id containing a
 * path separator). Errors are {@code CsiException}s with the spec's codes (ENOSPC ->
 * RESOURCE_EXHAUSTED, missing artifact -> NOT_FOUND, ...).
 */
public interface StorageEngine extends AutoCloseable {

    String name();

    PoolInfo pool();

    boolean supportsBlock();

    // ---- controller side: artifacts in the pool ----

    /** Creates an empty volume of exactly {@code capacityBytes} (rounded up to the engine's granularity, returned). */
    long createVolume(String volumeId, long capacityBytes);

    /** Creates a volume holding the snapshot's content, grown to {@code capacityBytes} if larger. */
    long restoreSnapshot(String volumeId, String snapshotId, long capacityBytes);

    /** Creates a volume holding the source volume's content (crash-consistent: frozen if mounted here). */
    long cloneVolume(String volumeId, String sourceVolumeId, long capacityBytes);

    /** Removes the volume's artifact; OK if it is already gone. */
    void deleteVolume(String volumeId);

    boolean volumeExists(String volumeId);

    /** Grows the artifact (and, if attached, the loop capacity); never shrinks. Returns the new size. */
    long expandVolume(String volumeId, long newCapacityBytes);

    /** Cuts a snapshot; a mounted filesystem volume is frozen around the cut. Returns its size. */
    long createSnapshot(String snapshotId, String volumeId);

    /**
     * Cuts one snapshot per entry (snapshot id -> volume id), write-order consistent across all:
     * freeze every mounted member, cut all, thaw all (always, also on error). On failure no
     * member snapshot is left behind.
     */
    Map<String, Long> createGroupSnapshot(Map<String, String> snapshotToVolume);

    void deleteSnapshot(String snapshotId);

    boolean snapshotExists(String snapshotId);

    /**
     * Applies mutable parameters (ControllerModifyVolume): {@code readAheadKiB} (to the attached
     * device now and at every later stage), {@code compression} on btrfs pools. Validates every
     * key first and applies nothing if one is unsupported (INVALID_ARGUMENT naming it).
     */
    void modifyVolume(String volumeId, Map<String, String> mutableParameters);

    /** Empty when healthy; else why not (artifact missing, device detached, filesystem read-only on errors). */
    java.util.Optional<String> volumeCondition(String volumeId);

    /** Ids of every volume artifact on disk (for the reconciler's orphan report). */
    Set<String> volumeArtifacts();

    Set<String> snapshotArtifacts();

    /** Removes leftovers of interrupted work (temp files); returns what was removed. */
    List<Path> removeTemporaryArtifacts();

    // ---- node side ----

    /**
     * Makes the volume available at {@code stagingPath}: a filesystem volume is attached,
     * formatted if blank (with {@code fsType}) and mounted there; a block volume is attached
     * and its device recorded. Idempotent from the kernel's mount table.
     */
    void stage(String volumeId, Path stagingPath, StageOptions options);

    void unstage(String volumeId, Path stagingPath);

    /** Bind-mounts the staged filesystem (or the block device) at {@code targetPath}. */
    void publish(String volumeId, Path stagingPath, Path targetPath, PublishOptions options);

    void unpublish(String volumeId, Path targetPath);

    VolumeStats stats(String volumeId, Path volumePath);

    /** Grows the filesystem online to fill the (already grown) volume. Returns the new size. */
    long nodeExpand(String volumeId, Path volumePath);

    @Override
    void close();
}
