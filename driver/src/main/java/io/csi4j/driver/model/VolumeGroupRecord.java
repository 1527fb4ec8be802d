package io.csi4j.driver.model;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/** A CSI-Addons volume group; its members live in a separate table (the catalog's {@code VolumeGroupTable.members}). */
public record VolumeGroupRecord(
        String id,
        String name,
        Map<String, String> parameters,
        State state,
        Instant createdAt,
        Instant updatedAt) implements Catalogued {

    public VolumeGroupRecord {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(name, "name");
        parameters = Map.copyOf(parameters);
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(updatedAt, "updatedAt");
    }

    public VolumeGroupRecord withState(State next) {
        return new VolumeGroupRecord(id, name, parameters, next, createdAt, updatedAt);
    }
}
