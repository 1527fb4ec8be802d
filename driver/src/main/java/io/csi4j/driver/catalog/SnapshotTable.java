package io.csi4j.driver.catalog;

import io.csi4j.driver.model.Page;
import io.csi4j.driver.model.SnapshotFilter;
import io.csi4j.driver.model.SnapshotRecord;

import io.csi4j.driver.json.Json;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** The snapshots table, including the members of group snapshots. */
public final class SnapshotTable extends ObjectTable<SnapshotRecord> {
    private static final String COLUMNS =
            "seq, id, name, source_volume_id, size_bytes, group_snapshot_id, parameters, state, created_at, updated_at";
    private static final Sql SQL = Sql.of("snapshots", COLUMNS);
    private static final String SELECT = "SELECT " + COLUMNS + " FROM snapshots";
    private static final String INSERT = "INSERT INTO snapshots (id, name, source_volume_id, size_bytes, "
            + "group_snapshot_id, parameters, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
    private static final String PAGE_BY_ID = SELECT + " WHERE id = ? AND seq > ? ORDER BY seq LIMIT ?";
    private static final String PAGE_BY_SOURCE =
            SELECT + " WHERE source_volume_id = ? AND seq > ? ORDER BY seq LIMIT ?";
    private static final String PAGE_BY_ID_AND_SOURCE =
            SELECT + " WHERE id = ? AND source_volume_id = ? AND seq > ? ORDER BY seq LIMIT ?";
    private static final String SET_SIZE = "UPDATE snapshots SET size_bytes = ?, updated_at = ? WHERE id = ?";
    private static final String ANSWERED = "UPDATE snapshots SET updated_at = ? WHERE id = ? AND state = 'READY'";
    private static final String OF_GROUP = SELECT + " WHERE group_snapshot_id = ? ORDER BY seq";
    // GLOB, not LIKE: LIKE ignores ASCII case, and a CO's "CSI4J-POINT-x" is not a point
    private static final String NAMED = SELECT + " WHERE state = 'READY' AND group_snapshot_id IS NULL"
            + " AND name IS NOT NULL AND name NOT GLOB ? AND source_volume_id GLOB ? ORDER BY seq";
    private static final String POINT_GLOB = SnapshotRecord.POINT_PREFIX + "*";

    SnapshotTable(Session session, InstantSource clock) {
        super(session, clock, SQL, "snapshot");
    }

    /**
     * @throws DuplicateNameException if a snapshot with this name exists
     * @throws ReferenceException if groupSnapshotId names no group snapshot
     */
    public void insert(SnapshotRecord s) {
        insertRow(s.id(), s.name(), INSERT, s.id(), s.name(), s.sourceVolumeId(), s.sizeBytes(), s.groupSnapshotId(),
                Json.writeSorted(s.parameters()), s.state().name(), Rows.nanos(s.createdAt()),
                Rows.nanos(s.updatedAt()));
    }

    /** Records the size once the snapshot is cut; false if no such snapshot. */
    public boolean setSize(String id, long sizeBytes) {
        Objects.requireNonNull(id, "id");
        if (sizeBytes < 0) throw new IllegalArgumentException("sizeBytes < 0: " + sizeBytes);
        long now = Rows.nanos(clock.instant());
        return session.write(c -> Rows.update(c, SET_SIZE, sizeBytes, now, id) == 1);
    }

    /** A READY snapshot answered a CreateSnapshot again: its updated_at is now; false if no such READY snapshot. */
    public boolean setAnswered(String id) {
        Objects.requireNonNull(id, "id");
        long now = Rows.nanos(clock.instant());
        return session.write(c -> Rows.update(c, ANSWERED, now, id) == 1);
    }

    /** ListSnapshots: rows matching {@code filter} in insertion order, after {@code afterSeq}. */
    public Page<SnapshotRecord> page(long afterSeq, int limit, SnapshotFilter filter) {
        Objects.requireNonNull(filter, "filter");
        String id = filter.snapshotId();
        String source = filter.sourceVolumeId();
        if (id == null && source == null) return page(afterSeq, limit);
        return session.read(c -> {
            if (source == null) return Rows.page(c, PAGE_BY_ID, this::map, afterSeq, limit, id);
            if (id == null) return Rows.page(c, PAGE_BY_SOURCE, this::map, afterSeq, limit, source);
            return Rows.page(c, PAGE_BY_ID_AND_SOURCE, this::map, afterSeq, limit, id, source);
        });
    }

    /**
     * Every READY snapshot a CO named (not a group member, not a replication point) whose source volume id matches
     * the SQL GLOB pattern {@code sourceGlob}, in insertion order: one query, filtered in the database. It walks the
     * READY rows (the state index): no index of its own, as it runs every few seconds and READY is most of the table.
     */
    public List<SnapshotRecord> named(String sourceGlob) {
        Objects.requireNonNull(sourceGlob, "sourceGlob");
        return session.read(c -> Rows.list(c, NAMED, this::map, POINT_GLOB, sourceGlob));
    }

    /** The member snapshots of a group snapshot, in insertion order. */
    public List<SnapshotRecord> ofGroup(String groupSnapshotId) {
        Objects.requireNonNull(groupSnapshotId, "groupSnapshotId");
        return session.read(c -> Rows.list(c, OF_GROUP, this::map, groupSnapshotId));
    }

    @Override
    SnapshotRecord map(ResultSet row) throws SQLException {
        Common c = common(row);
        return new SnapshotRecord(c.id(), c.name(), row.getString("source_volume_id"), row.getLong("size_bytes"),
                row.getString("group_snapshot_id"), c.parameters(), c.state(), c.createdAt(), c.updatedAt());
    }

    @Override
    Map<String, String> indexedQueries() {
        Map<String, String> queries = super.indexedQueries();
        queries.put("snapshots.pageById", PAGE_BY_ID);
        queries.put("snapshots.pageBySource", PAGE_BY_SOURCE);
        queries.put("snapshots.pageByIdAndSource", PAGE_BY_ID_AND_SOURCE);
        queries.put("snapshots.ofGroup", OF_GROUP);
        queries.put("snapshots.setAnswered", ANSWERED);
        queries.put("snapshots.named", NAMED);
        return queries;
    }
}
