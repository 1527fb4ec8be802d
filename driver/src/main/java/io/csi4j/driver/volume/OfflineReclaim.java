package io.csi4j.driver.volume;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.engine.SpaceReclaimer;
import io.csi4j.driver.model.VolumeKind;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.storage.StorageException;

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
        return engine.capability(SpaceReclaimer.class).isPresent();
    }

    public SpaceUsage reclaim(String volumeId) {
        VolumeRecord v = volumes.reads().readyVolume(volumeId, "volume");
        if (v.kind() == VolumeKind.BLOCK) {
            throw DomainException.precondition("volume " + volumeId + " is a block volume: the plugin cannot tell which of "
                    + "its blocks are free; discard from inside (blkdiscard, or fstrim of the filesystem on it)");
        }
        SpaceReclaimer reclaimer = engine.capability(SpaceReclaimer.class).orElseThrow(() ->
                StorageException.unsupported("the " + engine.name() + " engine cannot tell what a volume takes"));
        long before = reclaimer.allocatedBytes(volumeId);
        reclaimer.trimOffline(volumeId);
        return new SpaceUsage(before, reclaimer.allocatedBytes(volumeId));
    }
}
