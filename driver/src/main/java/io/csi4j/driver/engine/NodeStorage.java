package io.csi4j.driver.engine;

import io.csi4j.driver.storage.StorageException;
import java.nio.file.Path;
import java.util.List;

/**
 * The node side of storage: attach, stage and publish a volume of the pool on this node. Every method derives
 * its state from the kernel's mount table and loop devices, never from memory, so it works the same after a
 * restart. Errors are {@code StorageException}s with a reason, as on the pool side.
 */
public interface NodeStorage {

    /** "image" or "dir". */
    String name();

    /**
     * Makes the volume available at {@code stagingPath}: a filesystem volume is attached, formatted
     * if blank (with {@code fsType}; a different filesystem already there is IN_USE)
     * and mounted there; a block volume is attached. Idempotent from the kernel's mount table.
     */
    void stage(String volumeId, Path stagingPath, StageOptions options);

    /** Undoes {@link #stage}; IN_USE while the volume is still published. */
    void unstage(String volumeId, Path stagingPath);

    /** Bind-mounts the staged filesystem (or the block device) at {@code targetPath}, which it creates. */
    void publish(String volumeId, Path stagingPath, Path targetPath, PublishOptions options);

    /** Unmounts {@code targetPath} and removes it; OK when it is not mounted. */
    void unpublish(String volumeId, Path targetPath);

    /** Every mount point showing this volume now (its staging path and its targets), from the mount table. */
    List<Path> mountPoints(String volumeId);

    VolumeStats stats(String volumeId, Path volumePath);

    /** Grows the filesystem online to fill the (already grown) volume. Returns the new size. */
    long nodeExpand(String volumeId, Path volumePath);

    /**
     * Discards the free blocks of the volume's filesystem mounted at {@code volumePath} (its staging path or a
     * target). NOT_FOUND when no filesystem of this volume is mounted there.
     */
    default void trim(String volumeId, Path volumePath) {
        throw StorageException.unsupported("the " + name() + " engine cannot reclaim space");
    }
}
