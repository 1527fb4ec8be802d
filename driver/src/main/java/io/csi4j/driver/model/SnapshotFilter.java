package io.csi4j.driver.model;

/**
 * ListSnapshots filters: either, both (a snapshot must match both) or neither may be set.
 */
public record SnapshotFilter(String snapshotId, String sourceVolumeId) {
    public static final SnapshotFilter ALL = new SnapshotFilter(null, null);

    public static SnapshotFilter byId(String snapshotId) {
        return new SnapshotFilter(java.util.Objects.requireNonNull(snapshotId), null);
    }

    public static SnapshotFilter bySourceVolume(String sourceVolumeId) {
        return new SnapshotFilter(null, java.util.Objects.requireNonNull(sourceVolumeId));
    }
}
