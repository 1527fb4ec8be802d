package io.csi4j.driver.catalog;

import io.csi4j.driver.model.VolumeGroupRecord;

import io.csi4j.driver.json.Json;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The CSI-Addons volume groups table and their memberships. Deleting a group or a volume removes its
 * memberships with it; whether that is allowed is the domain's decision, made before.
 */
public final class VolumeGroupTable extends ObjectTable<VolumeGroupRecord> {
    private static final String COLUMNS = "seq, id, name, parameters, state, created_at, updated_at";
    private static final Sql SQL = Sql.of("volume_groups", COLUMNS);
    private static final String INSERT = "INSERT INTO volume_groups (id, name, parameters, state, created_at, "
            + "updated_at) VALUES (?, ?, ?, ?, ?, ?)";
    private static final String ADD_MEMBER =
            "INSERT INTO volume_group_members (group_id, volume_id) VALUES (?, ?) ON CONFLICT DO NOTHING";
    private static final String REMOVE_MEMBER = "DELETE FROM volume_group_members WHERE group_id = ? AND volume_id = ?";
    private static final String MEMBERS =
            "SELECT volume_id FROM volume_group_members WHERE group_id = ? ORDER BY volume_id";
    private static final String GROUPS_OF =
            "SELECT group_id FROM volume_group_members WHERE volume_id = ? ORDER BY group_id";

    VolumeGroupTable(Session session, InstantSource clock) {
        super(session, clock, SQL, "volume group");
    }

    /** @throws DuplicateNameException if a volume group with this name exists */
    public void insert(VolumeGroupRecord g) {
        insertRow(g.id(), g.name(), INSERT, g.id(), g.name(), Json.writeSorted(g.parameters()), g.state().name(),
                Rows.nanos(g.createdAt()), Rows.nanos(g.updatedAt()));
    }

    /**
     * Makes the volume a member; false if it already was.
     * @throws ReferenceException if the group or the volume does not exist
     */
    public boolean addMember(String groupId, String volumeId) {
        Objects.requireNonNull(groupId, "groupId");
        Objects.requireNonNull(volumeId, "volumeId");
        return session.write(c -> {
            try {
                return Rows.update(c, ADD_MEMBER, groupId, volumeId) == 1;
            } catch (SQLException e) {
                if (SqlErrors.isForeignKeyViolation(e)) {
                    throw new ReferenceException("volume group " + groupId + " or volume " + volumeId
                            + " does not exist", e);
                }
                throw e;
            }
        });
    }

    /** Ends a membership; false if there was none. */
    public boolean removeMember(String groupId, String volumeId) {
        Objects.requireNonNull(groupId, "groupId");
        Objects.requireNonNull(volumeId, "volumeId");
        return session.write(c -> Rows.update(c, REMOVE_MEMBER, groupId, volumeId) == 1);
    }

    /** The volume ids in a group, sorted. */
    public List<String> members(String groupId) {
        Objects.requireNonNull(groupId, "groupId");
        return session.read(c -> Rows.list(c, MEMBERS, row -> row.getString(1), groupId));
    }

    /** The group ids a volume belongs to, sorted. */
    public List<String> groupsOf(String volumeId) {
        Objects.requireNonNull(volumeId, "volumeId");
        return session.read(c -> Rows.list(c, GROUPS_OF, row -> row.getString(1), volumeId));
    }

    @Override
    VolumeGroupRecord map(ResultSet row) throws SQLException {
        Common c = common(row);
        return new VolumeGroupRecord(c.id(), c.name(), c.parameters(), c.state(), c.createdAt(), c.updatedAt());
    }

    @Override
    Map<String, String> indexedQueries() {
        Map<String, String> queries = super.indexedQueries();
        queries.put("volume_group_members.remove", REMOVE_MEMBER);
        queries.put("volume_group_members.members", MEMBERS);
        queries.put("volume_group_members.groupsOf", GROUPS_OF);
        return queries;
    }
}
