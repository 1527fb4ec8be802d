package io.csi4j.driver.engine;

import java.nio.file.Path;
import java.util.List;

/**
 * Capability: the node side of storage, attach, stage and publish a volume of the pool on this node (both engines
 * have it; the core, {@link PoolStorage}, is what the controller's domain needs). Every method derives its state
 * from the kernel's mount table and loop devices, never from memory, so it is idempotent and works the same after a
 * restart. Errors are {@code StorageException}s with a reason, as on the pool side: NOT_FOUND without the volume,
 * INVALID for options the engine cannot apply, IN_USE for something else in the way.
 */
public interface NodeStorage extends Capability {

    /**
     * Makes the volume available at {@code stagingPath}: a filesystem volume is attached, formatted
     * if blank (with {@code fsType}; a different filesystem already there is IN_USE)
     * and mounted there; a block volume is attached. Idempotent from the kernel's mount table.
     */
    void stage(String volumeId, Path stagingPath, StageOptions options);

    /** Undoes {@link #stage}; OK when it is not staged; IN_USE while the volume is still published. */
    void unstage(String volumeId, Path stagingPath);

    /**
     * Bind-mounts the staged filesystem (or the block device) at {@code targetPath}, which it creates; a repeat is OK
     * (idempotent from the mount table).
     */
    void publish(String volumeId, Path stagingPath, Path targetPath, PublishOptions options);

    /** Unmounts {@code targetPath} and removes it; OK when it is not mounted. */
    void unpublish(String volumeId, Path targetPath);

    /** Every mount point showing this volume now (its staging path and its targets), from the mount table. */
    List<Path> mountPoints(String volumeId);

    /** Usage of the volume published or staged at {@code volumePath}; NOT_FOUND when it is not there. Reads only. */
    VolumeStats stats(String volumeId, Path volumePath);

    /** Grows the filesystem online to fill the (already grown) volume; a repeat is a no-op. Returns the new size. */
    long nodeExpand(String volumeId, Path volumePath);
}
