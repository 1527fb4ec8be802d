package io.csi4j.driver.catalog;

import io.csi4j.driver.model.PublicationRecord;

import io.csi4j.driver.json.Json;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/** Controller publications, keyed by (volume, node). A volume with publications cannot be deleted. */
public final class PublicationTable {
    private static final String COLUMNS = "volume_id, node_id, read_only, access_mode, publish_context, created_at";
    private static final String INSERT = "INSERT INTO publications (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?) "
            + "ON CONFLICT (volume_id, node_id) DO NOTHING";
    private static final String GET = "SELECT " + COLUMNS + " FROM publications WHERE volume_id = ? AND node_id = ?";
    private static final String OF_VOLUME =
            "SELECT " + COLUMNS + " FROM publications WHERE volume_id = ? ORDER BY node_id";
    private static final String ON_NODE = "SELECT " + COLUMNS + " FROM publications WHERE node_id = ? ORDER BY volume_id";
    private static final String NODES_OF = "SELECT volume_id, node_id FROM publications "
            + "WHERE volume_id IN (SELECT value FROM json_each(?)) ORDER BY volume_id, node_id";
    private static final String FIRST = "SELECT volume_id, node_id FROM publications ORDER BY volume_id, node_id LIMIT ?";
    private static final String DELETE = "DELETE FROM publications WHERE volume_id = ? AND node_id = ?";
    private static final String COUNT = "SELECT count(*) FROM publications";

    private final Session session;

    PublicationTable(Session session) {
        this.session = session;
    }

    /**
     * Records a publication; false if (volume, node) was already published (compare with {@link #get} for
     * CSI idempotency).
     * @throws ReferenceException if the volume does not exist
     */
    public boolean insert(PublicationRecord p) {
        return session.write(c -> {
            try {
                return Rows.update(c, INSERT, p.volumeId(), p.nodeId(), p.readOnly() ? 1 : 0, p.accessMode(),
                        Json.writeSorted(p.publishContext()), Rows.nanos(p.createdAt())) == 1;
            } catch (SQLException e) {
                if (SqlErrors.isForeignKeyViolation(e)) {
                    throw new ReferenceException("volume " + p.volumeId() + " does not exist", e);
                }
                throw e;
            }
        });
    }

    public Optional<PublicationRecord> get(String volumeId, String nodeId) {
        Objects.requireNonNull(volumeId, "volumeId");
        Objects.requireNonNull(nodeId, "nodeId");
        return session.read(c -> Rows.one(c, GET, PublicationTable::map, volumeId, nodeId));
    }

    /** Where a volume is published, sorted by node. */
    public List<PublicationRecord> ofVolume(String volumeId) {
        Objects.requireNonNull(volumeId, "volumeId");
        return session.read(c -> Rows.list(c, OF_VOLUME, PublicationTable::map, volumeId));
    }

    /**
     * The nodes each of these volumes is published to (sorted), in one query: a page of ListVolumes asks
     * once, not once per volume. Volumes published nowhere are absent from the map.
     */
    public Map<String, List<String>> nodesOf(Collection<String> volumeIds) {
        if (volumeIds.isEmpty()) return Map.of();
        return session.read(c -> {
            Map<String, List<String>> nodes = new HashMap<>();
            // Usually the whole table has fewer rows than the page has volumes: read it (at most one row more than
            // the page) and keep the page's, instead of encoding the ids as JSON and looking each one up.
            Set<String> wanted = new HashSet<>(volumeIds);
            int read = 0;
            try (ResultSet row = Rows.bind(c, FIRST, wanted.size() + 1L).executeQuery()) {
                while (row.next()) {
                    read++;
                    String volumeId = row.getString(1);
                    if (wanted.contains(volumeId)) nodes.computeIfAbsent(volumeId, v -> new ArrayList<>()).add(row.getString(2));
                }
            }
            if (read <= wanted.size()) return nodes;
            nodes.clear();
            try (ResultSet row = Rows.bind(c, NODES_OF, Json.write(List.copyOf(wanted))).executeQuery()) {
                while (row.next()) nodes.computeIfAbsent(row.getString(1), v -> new ArrayList<>()).add(row.getString(2));
            }
            return nodes;
        });
    }

    /** What is published to a node, sorted by volume. */
    public List<PublicationRecord> onNode(String nodeId) {
        Objects.requireNonNull(nodeId, "nodeId");
        return session.read(c -> Rows.list(c, ON_NODE, PublicationTable::map, nodeId));
    }

    /** Removes a publication; false if there was none. */
    public boolean delete(String volumeId, String nodeId) {
        Objects.requireNonNull(volumeId, "volumeId");
        Objects.requireNonNull(nodeId, "nodeId");
        return session.write(c -> Rows.update(c, DELETE, volumeId, nodeId) == 1);
    }

    public long count() {
        return session.read(c -> Rows.count(c, COUNT));
    }

    private static PublicationRecord map(ResultSet row) throws SQLException {
        return new PublicationRecord(
                row.getString("volume_id"),
                row.getString("node_id"),
                row.getInt("read_only") != 0,
                row.getString("access_mode"),
                Json.parseStringMap(row.getString("publish_context")),
                Rows.instant(row.getLong("created_at")));
    }

    Map<String, String> indexedQueries() {
        Map<String, String> queries = new LinkedHashMap<>();
        queries.put("publications.get", GET);
        queries.put("publications.ofVolume", OF_VOLUME);
        queries.put("publications.onNode", ON_NODE);
        queries.put("publications.delete", DELETE);
        queries.put("publications.nodesOf", NODES_OF);
        return queries;
    }
}
