package io.csi4j.driver.model;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * A volume as the catalog knows it. {@code fsType} is null for block volumes and for filesystem volumes
 * that take the driver's default. {@code parameters} are the StorageClass parameters (never secrets).
 */
public record VolumeRecord(
        String id,
        String name,
        long capacityBytes,
        VolumeKind kind,
        String fsType,
        Map<String, String> parameters,
        Map<String, String> mutableParameters,
        ContentSource source,
        String nodeId,
        State state,
        Instant createdAt,
        Instant updatedAt) implements Catalogued {

    public VolumeRecord {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(name, "name");
        if (capacityBytes < 0) throw new IllegalArgumentException("capacityBytes < 0: " + capacityBytes);
        Objects.requireNonNull(kind, "kind");
        parameters = Map.copyOf(parameters);
        mutableParameters = Map.copyOf(mutableParameters);
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(updatedAt, "updatedAt");
    }

    public VolumeRecord withState(State next) {
        return new VolumeRecord(id, name, capacityBytes, kind, fsType, parameters, mutableParameters, source,
                nodeId, next, createdAt, updatedAt);
    }

    public VolumeRecord withCapacity(long bytes) {
        return new VolumeRecord(id, name, bytes, kind, fsType, parameters, mutableParameters, source,
                nodeId, state, createdAt, updatedAt);
    }

    /** The volume_context the wire shows of this volume. */
    public Map<String, String> context() {
        return VolumeContext.of(kind, fsType);
    }
}
