package io.csi4j.driver.catalog;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.InstantSource;
import java.util.Map;
import java.util.Objects;

/** The volumes table. */
public final class VolumeTable extends ObjectTable<VolumeRecord> {
    private static final String COLUMNS = "seq, id, name, capacity_bytes, kind, fs_type, parameters, "
            + "mutable_parameters, source_kind, source_id, node_id, state, created_at, updated_at";
    private static final String INSERT = "INSERT INTO volumes (id, name, capacity_bytes, kind, fs_type, parameters, "
            + "mutable_parameters, source_kind, source_id, node_id, state, created_at, updated_at) "
            + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    private static final String SET_CAPACITY = "UPDATE volumes SET capacity_bytes = ?, updated_at = ? WHERE id = ?";
    private static final String SET_MUTABLE =
            "UPDATE volumes SET mutable_parameters = ?, updated_at = ? WHERE id = ?";

    VolumeTable(Session session, InstantSource clock) {
        super(session, clock, "volumes", "volume", COLUMNS);
    }

    /** @throws DuplicateNameException if a volume with this name exists (whatever its state) */
    public void insert(VolumeRecord v) {
        String sourceKind = switch (v.source()) {
            case ContentSource.None _ -> "NONE";
            case ContentSource.FromSnapshot _ -> "SNAPSHOT";
            case ContentSource.FromVolume _ -> "VOLUME";
        };
        String sourceId = switch (v.source()) {
            case ContentSource.None _ -> null;
            case ContentSource.FromSnapshot s -> s.snapshotId();
            case ContentSource.FromVolume s -> s.volumeId();
        };
        insertRow(v.id(), v.name(), INSERT, v.id(), v.name(), v.capacityBytes(), v.kind().name(), v.fsType(),
                Json.encodeMap(v.parameters()), Json.encodeMap(v.mutableParameters()), sourceKind, sourceId,
                v.nodeId(), v.state().name(), Rows.nanos(v.createdAt()), Rows.nanos(v.updatedAt()));
    }

    /** Records a new size after an expansion; false if no such volume. */
    public boolean setCapacity(String id, long capacityBytes) {
        Objects.requireNonNull(id, "id");
        if (capacityBytes < 0) throw new IllegalArgumentException("capacityBytes < 0: " + capacityBytes);
        long now = Rows.nanos(clock.instant());
        return session.write(c -> Rows.update(c, SET_CAPACITY, capacityBytes, now, id) == 1);
    }

    /** Replaces the mutable parameters (ControllerModifyVolume); false if no such volume. */
    public boolean setMutableParameters(String id, Map<String, String> mutableParameters) {
        Objects.requireNonNull(id, "id");
        String json = Json.encodeMap(mutableParameters);
        long now = Rows.nanos(clock.instant());
        return session.write(c -> Rows.update(c, SET_MUTABLE, json, now, id) == 1);
    }

    @Override
    VolumeRecord map(ResultSet row) throws SQLException {
        String sourceId = row.getString("source_id");
        ContentSource source = switch (row.getString("source_kind")) {
            case "NONE" -> ContentSource.NONE;
            case "SNAPSHOT" -> new ContentSource.FromSnapshot(sourceId);
            case "VOLUME" -> new ContentSource.FromVolume(sourceId);
            default -> throw new CatalogException("volume " + row.getString("id") + ": unknown source kind "
                    + row.getString("source_kind"));
        };
        return new VolumeRecord(
                row.getString("id"),
                row.getString("name"),
                row.getLong("capacity_bytes"),
                VolumeKind.valueOf(row.getString("kind")),
                row.getString("fs_type"),
                Json.decodeMap(row.getString("parameters")),
                Json.decodeMap(row.getString("mutable_parameters")),
                source,
                row.getString("node_id"),
                Rows.state(row),
                Rows.instant(row.getLong("created_at")),
                Rows.instant(row.getLong("updated_at")));
    }

    @Override
    Map<String, String> indexedQueries() {
        Map<String, String> queries = super.indexedQueries();
        queries.put("volumes.setCapacity", SET_CAPACITY);
        queries.put("volumes.setMutableParameters", SET_MUTABLE);
        return queries;
    }
}
