package io.csi4j.driver.model;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A group snapshot. Its member snapshots are the snapshot rows whose groupSnapshotId is this id
 * (the catalog's {@code SnapshotTable.ofGroup}); {@code sourceVolumeIds} is what was asked for, known before they exist.
 */
public record GroupSnapshotRecord(
        String id,
        String name,
        List<String> sourceVolumeIds,
        Map<String, String> parameters,
        State state,
        Instant createdAt,
        Instant updatedAt) implements Catalogued {

    public GroupSnapshotRecord {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(name, "name");
        sourceVolumeIds = List.copyOf(sourceVolumeIds);
        parameters = Map.copyOf(parameters);
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(updatedAt, "updatedAt");
    }

    public GroupSnapshotRecord withState(State next) {
        return new GroupSnapshotRecord(id, name, sourceVolumeIds, parameters, next, createdAt, updatedAt);
    }
}
