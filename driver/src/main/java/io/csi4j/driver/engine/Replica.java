package io.csi4j.driver.engine;

/**
 * A node's copy of a snapshot of another node's volume, kept after a restore from it (a reflink: no space until the
 * restored volume diverges). A later restore of a newer snapshot of that volume starts from it and needs only the
 * ranges that changed. One per source volume.
 */
public record Replica(String sourceVolumeId, String snapshotId) implements ImportBase {
    public Replica {
        PoolLayout.checkId("volume", sourceVolumeId);
        PoolLayout.checkId("snapshot", snapshotId);
    }
}
