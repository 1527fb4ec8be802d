package io.csi4j.driver.catalog;

import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.Page;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeKind;
import io.csi4j.driver.model.VolumeListing;
import io.csi4j.driver.model.VolumeRecord;

import io.csi4j.driver.json.Json;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.InstantSource;
import java.util.Map;
import java.util.Objects;

/** The volumes table. */
public final class VolumeTable extends ObjectTable<VolumeRecord> {
    private static final String COLUMNS = "seq, id, name, capacity_bytes, kind, fs_type, parameters, "
            + "mutable_parameters, source_kind, source_id, node_id, state, created_at, updated_at";
    private static final Sql SQL = Sql.of("volumes", COLUMNS);
    private static final String INSERT = "INSERT INTO volumes (id, name, capacity_bytes, kind, fs_type, parameters, "
            + "mutable_parameters, source_kind, source_id, node_id, state, created_at, updated_at) "
            + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    private static final VolumeKind[] KINDS = VolumeKind.values();
    private static final State[] STATES = State.values();
    private static final String[] SOURCE_KINDS = {"NONE", "SNAPSHOT", "VOLUME"};
    /**
     * kind, source_kind and state as the index of their text (the CHECK constraints allow no other): a page reads
     * 10,000 rows, and a column read as a number costs no decode and no string.
     */
    private static final String LISTING_PAGE = "SELECT seq, id, capacity_bytes, " + Rows.indexOf("kind", names(KINDS))
            + ", fs_type, " + Rows.indexOf("source_kind", SOURCE_KINDS) + ", source_id, node_id, "
            + Rows.indexOf("state", names(STATES)) + " FROM volumes WHERE seq > ? ORDER BY seq LIMIT ?";
    private static final String SET_CAPACITY = "UPDATE volumes SET capacity_bytes = ?, updated_at = ? WHERE id = ?";
    private static final String SET_MUTABLE =
            "UPDATE volumes SET mutable_parameters = ?, updated_at = ? WHERE id = ?";

    VolumeTable(Session session, InstantSource clock) {
        super(session, clock, SQL, "volume");
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
                Json.writeSorted(v.parameters()), Json.writeSorted(v.mutableParameters()), sourceKind, sourceId,
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
        String json = Json.writeSorted(mutableParameters);
        long now = Rows.nanos(clock.instant());
        return session.write(c -> Rows.update(c, SET_MUTABLE, json, now, id) == 1);
    }

    /** As {@link #page}, with only what a listing shows of each volume. */
    public Page<VolumeListing> listingPage(long afterSeq, int limit) {
        return session.read(c -> Rows.page(c, LISTING_PAGE, VolumeTable::listing, afterSeq, limit));
    }

    private static VolumeListing listing(ResultSet row) throws SQLException {
        String id = row.getString(2);   // read once: every column read is a JNI call and a decode (10,000 per page)
        return new VolumeListing(id, row.getLong(3), KINDS[Rows.index(row, 4, "kind")], row.getString(5),
                source(id, SOURCE_KINDS[Rows.index(row, 6, "source_kind")], row.getString(7)), row.getString(8),
                STATES[Rows.index(row, 9, "state")]);
    }

    private static String[] names(Enum<?>[] constants) {
        String[] names = new String[constants.length];
        for (int i = 0; i < constants.length; i++) names[i] = constants[i].name();
        return names;
    }

    private static ContentSource source(String volumeId, String kind, String sourceId) {
        return switch (kind) {
            case "NONE" -> ContentSource.NONE;
            case "SNAPSHOT" -> new ContentSource.FromSnapshot(sourceId);
            case "VOLUME" -> new ContentSource.FromVolume(sourceId);
            default -> throw new CatalogException("volume " + volumeId + ": unknown source kind " + kind);
        };
    }

    /** By column position (see COLUMNS), not name: a page maps thousands of rows and each name is a lookup. */
    @Override
    VolumeRecord map(ResultSet row) throws SQLException {
        String id = row.getString(2);
        ContentSource source = source(id, row.getString(9), row.getString(10));
        return new VolumeRecord(
                id,
                row.getString(3),
                row.getLong(4),
                VolumeKind.valueOf(row.getString(5)),
                row.getString(6),
                Json.parseStringMap(row.getString(7)),
                Json.parseStringMap(row.getString(8)),
                source,
                row.getString(11),
                State.valueOf(row.getString(12)),
                Rows.instant(row.getLong(13)),
                Rows.instant(row.getLong(14)));
    }

    @Override
    Map<String, String> indexedQueries() {
        Map<String, String> queries = super.indexedQueries();
        queries.put("volumes.setCapacity", SET_CAPACITY);
        queries.put("volumes.setMutableParameters", SET_MUTABLE);
        queries.put("volumes.listing.page", LISTING_PAGE);
        return queries;
    }
}
