package io.csi4j.driver.engine;

import java.util.List;

/**
 * Capability: volumes are held write-order consistent between calls, for a group snapshot that spans nodes (the
 * cluster freezes every node's members, then cuts each part under its hold).
 */
public interface Freezer extends Capability {

    /**
     * Freezes the mounted filesystems of these volumes until the returned hold is closed (flushing attached block
     * devices, which cannot be frozen; an engine that cannot freeze refuses a member published writable with IN_USE).
     * NOT_FOUND for a volume that does not exist; BUSY when one is frozen already. The caller must close the hold,
     * also when it fails; a crash while holding is undone at the next start ({@link PoolStorage#removeTemporaryArtifacts}).
     */
    FreezeHold holdFrozen(List<String> volumeIds);
}
