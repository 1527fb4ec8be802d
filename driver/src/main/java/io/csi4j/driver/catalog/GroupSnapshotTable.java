package io.csi4j.driver.catalog;

import io.csi4j.driver.model.GroupSnapshotRecord;

import io.csi4j.driver.json.Json;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.InstantSource;

/** The group snapshots table; members are in {@link SnapshotTable} (insert them in the same transaction). */
public final class GroupSnapshotTable extends ObjectTable<GroupSnapshotRecord> {
    private static final String COLUMNS = "seq, id, name, source_volume_ids, parameters, state, created_at, updated_at";
    private static final Sql SQL = Sql.of("group_snapshots", COLUMNS);
    private static final String INSERT = "INSERT INTO group_snapshots (id, name, source_volume_ids, parameters, "
            + "state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)";

    GroupSnapshotTable(Session session, InstantSource clock) {
        super(session, clock, SQL, "group snapshot");
    }

    /** @throws DuplicateNameException if a group snapshot with this name exists */
    public void insert(GroupSnapshotRecord g) {
        insertRow(g.id(), g.name(), INSERT, g.id(), g.name(), Json.write(g.sourceVolumeIds()),
                Json.writeSorted(g.parameters()), g.state().name(), Rows.nanos(g.createdAt()),
                Rows.nanos(g.updatedAt()));
    }

    @Override
    GroupSnapshotRecord map(ResultSet row) throws SQLException {
        Common c = common(row);
        return new GroupSnapshotRecord(c.id(), c.name(), Json.parseStringList(row.getString("source_volume_ids")),
                c.parameters(), c.state(), c.createdAt(), c.updatedAt());
    }
}
