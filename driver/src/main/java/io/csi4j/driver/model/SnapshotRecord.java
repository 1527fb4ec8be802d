package io.csi4j.driver.model;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * A snapshot. A member of a group snapshot has {@code groupSnapshotId} set and may have no name of its own
 * (CSI names only the group); every other snapshot has a name. {@code createdAt} keeps nanoseconds:
 * it is the CSI creation_time.
 */
public record SnapshotRecord(
        String id,
        String name,
        String sourceVolumeId,
        long sizeBytes,
        String groupSnapshotId,
        Map<String, String> parameters,
        State state,
        Instant createdAt,
        Instant updatedAt) implements Catalogued {

    public SnapshotRecord {
        Objects.requireNonNull(id, "id");
        if (name == null && groupSnapshotId == null) {
            throw new IllegalArgumentException("a snapshot outside a group snapshot needs a name");
        }
        Objects.requireNonNull(sourceVolumeId, "sourceVolumeId");
        if (sizeBytes < 0) throw new IllegalArgumentException("sizeBytes < 0: " + sizeBytes);
        parameters = Map.copyOf(parameters);
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(updatedAt, "updatedAt");
    }

    /**
     * Names of replication points (docs/replication.md): snapshots internal to replication, not the CO's. A CO cannot
     * make one (INVALID_ARGUMENT), does not see them (ListSnapshots), cannot read one by id (GetSnapshot,
     * SnapshotMetadata, a CreateVolume source: NOT_FOUND, volume.Lookup.coSnapshots) and cannot delete them
     * (FAILED_PRECONDITION).
     */
    public static final String POINT_PREFIX = "csi4j-point-";

    public static boolean isPointName(String name) {
        return name != null && name.startsWith(POINT_PREFIX);                     // group members have no name
    }

    /** Whether this is a replication point: to a CO it does not exist (only replication reads it). */
    public boolean isPoint() {
        return isPointName(name);
    }

    public SnapshotRecord withState(State next) {
        return new SnapshotRecord(id, name, sourceVolumeId, sizeBytes, groupSnapshotId, parameters, next,
                createdAt, updatedAt);
    }
}
