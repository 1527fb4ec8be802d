package io.csi4j.driver.volume;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.model.VolumeKind;
import io.csi4j.driver.model.VolumeRecord;

/**
 * ControllerReclaimSpace: gives the free space of a filesystem volume back to the pool while no workload uses
 * it. The engine mounts it where nobody else can see it, trims it and unmounts (a volume staged here is trimmed
 * in place). Block volumes are refused: their free blocks are known only to their consumer.
 */
public final class OfflineReclaim {
    private final Volumes volumes;
    private final PoolStorage engine;

    public OfflineReclaim(Volumes volumes, PoolStorage engine) {
        this.volumes = volumes;
        this.engine = engine;
    }

    public boolean available() {
        return engine.reclaimsSpace();
    }

    public SpaceUsage reclaim(String volumeId) {
        VolumeRecord v = volumes.readyVolume(volumeId, "volume");
        if (v.kind() == VolumeKind.BLOCK) {
            throw DomainException.precondition("volume " + volumeId + " is a block volume: the plugin cannot tell which of "
                    + "its blocks are free; discard from inside (blkdiscard, or fstrim of the filesystem on it)");
        }
        long before = engine.allocatedBytes(volumeId);
        engine.trimOffline(volumeId);
        return new SpaceUsage(before, engine.allocatedBytes(volumeId));
    }
}
