package io.csi4j.driver.model;

import java.util.Objects;

/**
 * ListSnapshots filters: either, both (a snapshot must match both) or neither may be set.
 */
public record SnapshotFilter(String snapshotId, String sourceVolumeId) {
    public static final SnapshotFilter ALL = new SnapshotFilter(null, null);

    public static SnapshotFilter byId(String snapshotId) {
        return new SnapshotFilter(Objects.requireNonNull(snapshotId), null);
    }

    public static SnapshotFilter bySourceVolume(String sourceVolumeId) {
        return new SnapshotFilter(null, Objects.requireNonNull(sourceVolumeId));
    }
}
