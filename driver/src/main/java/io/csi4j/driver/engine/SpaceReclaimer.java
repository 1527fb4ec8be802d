package io.csi4j.driver.engine;

import java.nio.file.Path;

/**
 * Capability: a volume's free space goes back to the pool (CSI-Addons ReclaimSpace), and what a volume really takes
 * can be told. An engine without it serves no ReclaimSpace.
 */
public interface SpaceReclaimer extends Capability {

    /** Bytes the volume really takes in the pool (allocated blocks, not its size). NOT_FOUND without its artifact. */
    long allocatedBytes(String volumeId);

    /**
     * Reclaims the free space of a filesystem volume that no workload uses, without showing its filesystem to anyone
     * (ControllerReclaimSpace); a volume staged here is trimmed where it is mounted. Idempotent (a repeat finds less to
     * give back). NOT_FOUND without the volume; IN_USE while it is attached as a block device or holds a filesystem
     * not of ours.
     */
    void trimOffline(String volumeId);

    /**
     * Discards the free blocks of the volume's filesystem mounted at {@code volumePath} (its staging path or a target;
     * NodeReclaimSpace). NOT_FOUND when no filesystem of this volume is mounted there.
     */
    void trim(String volumeId, Path volumePath);
}
