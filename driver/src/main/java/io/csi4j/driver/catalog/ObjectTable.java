package io.csi4j.driver.catalog;

import io.csi4j.driver.json.Json;
import io.csi4j.driver.model.Page;
import io.csi4j.driver.model.State;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What every catalogued object table has: unique id and name, a state, timestamps, and an AUTOINCREMENT
 * {@code seq} for keyset paging. Each statement runs in the table's {@link Session}: on its own, or inside
 * the transaction that handed the table out.
 */
public abstract sealed class ObjectTable<T> permits VolumeTable, SnapshotTable, GroupSnapshotTable, VolumeGroupTable {
    final Session session;
    final InstantSource clock;
    final String table;
    final String kind;
    final String columns;

    private final Sql statements;

    /**
     * A table's statements, built once per table class: a transaction makes its tables anew, and building these
     * strings each time (and hashing the fresh strings again in the connection's statement cache) was work per call.
     */
    record Sql(String table, String columns, String byId, String byName, String idByName, String setState, String delete,
               String deleteInState, String inState, String count, String countInState, String page) {
        static Sql of(String table, String columns) {
            String select = "SELECT " + columns + " FROM " + table;
            String delete = "DELETE FROM " + table + " WHERE id = ?";
            return new Sql(table, columns, select + " WHERE id = ?", select + " WHERE name = ?",
                    "SELECT id FROM " + table + " WHERE name = ?",
                    "UPDATE " + table + " SET state = ?, updated_at = ? WHERE id = ? AND state = ?",
                    delete, delete + " AND state = ?", select + " WHERE state = ? ORDER BY seq",
                    "SELECT count(*) FROM " + table, "SELECT count(*) FROM " + table + " WHERE state = ?",
                    select + " WHERE seq > ? ORDER BY seq LIMIT ?");
        }
    }

    ObjectTable(Session session, InstantSource clock, Sql sql, String kind) {
        this.session = session;
        this.clock = clock;
        this.table = sql.table();
        this.kind = kind;
        this.columns = sql.columns();
        this.statements = sql;
    }

    abstract T map(ResultSet row) throws SQLException;

    /** The columns every object row has, as {@link #common} reads them by name. */
    record Common(String id, String name, Map<String, String> parameters, State state, Instant createdAt, Instant updatedAt) {}

    /**
     * Reads the columns every object row has (id, name, parameters, state, created_at, updated_at), so that a
     * table's {@link #map} reads only its own. {@link VolumeTable} reads by position instead, for its listing pages.
     */
    static Common common(ResultSet row) throws SQLException {
        return new Common(row.getString("id"), row.getString("name"), Json.parseStringMap(row.getString("parameters")),
                Rows.state(row), Rows.instant(row.getLong("created_at")), Rows.instant(row.getLong("updated_at")));
    }

    public Optional<T> byId(String id) {
        Objects.requireNonNull(id, "id");
        return session.read(c -> Rows.one(c, statements.byId(), this::map, id));
    }

    public Optional<T> byName(String name) {
        Objects.requireNonNull(name, "name");
        return session.read(c -> Rows.one(c, statements.byName(), this::map, name));
    }

    /**
     * Compare-and-set: moves the row from {@code from} to {@code to} and stamps updatedAt. False when the
     * row does not exist or is not in {@code from} (someone else moved it first).
     */
    public boolean setState(String id, State from, State to) {
        Objects.requireNonNull(id, "id");
        if (!from.canBecome(to)) throw new IllegalArgumentException(kind + " cannot go from " + from + " to " + to);
        long now = Rows.nanos(clock.instant());
        return session.write(c -> Rows.update(c, statements.setState(), to.name(), now, id, from.name()) == 1);
    }

    /** Removes the row; false if there was none. Refused while other rows still refer to it. */
    public boolean delete(String id) {
        Objects.requireNonNull(id, "id");
        return session.write(c -> {
            try {
                return Rows.update(c, statements.delete(), id) == 1;
            } catch (SQLException e) {
                if (SqlErrors.isForeignKeyViolation(e)) {
                    throw new ReferenceException(kind + " " + id + " is still referenced by other rows", e);
                }
                throw e;
            }
        });
    }

    /**
     * Compare-and-delete: removes the row only if it is in {@code state}; false when it does not exist or is
     * in another state. Refused while other rows still refer to it.
     */
    public boolean deleteInState(String id, State state) {
        Objects.requireNonNull(id, "id");
        return session.write(c -> {
            try {
                return Rows.update(c, statements.deleteInState(), id, state.name()) == 1;
            } catch (SQLException e) {
                if (SqlErrors.isForeignKeyViolation(e)) {
                    throw new ReferenceException(kind + " " + id + " is still referenced by other rows", e);
                }
                throw e;
            }
        });
    }

    /** Every row in {@code state}, oldest first: the reconciler's work list. */
    public List<T> inState(State state) {
        return session.read(c -> Rows.list(c, statements.inState(), this::map, state.name()));
    }

    public long count() {
        return session.read(c -> Rows.count(c, statements.count()));
    }

    public long count(State state) {
        return session.read(c -> Rows.count(c, statements.countInState(), state.name()));
    }

    /** All rows in insertion order, {@code limit} at a time, starting after {@code afterSeq} (0 for the first page). */
    public Page<T> page(long afterSeq, int limit) {
        return session.read(c -> Rows.page(c, statements.page(), this::map, afterSeq, limit));
    }

    /** Inserts with name-uniqueness turned into {@link DuplicateNameException} and dangling references into {@link ReferenceException}. */
    void insertRow(String id, String name, String sql, Object... args) {
        session.write(c -> {
            try {
                Rows.update(c, sql, args);
                return null;
            } catch (SQLException e) {
                if (SqlErrors.isUniqueViolation(e)) {
                    Optional<String> existing = name == null ? Optional.empty()
                            : Rows.one(c, statements.idByName(), row -> row.getString(1), name);
                    if (existing.isPresent()) throw new DuplicateNameException(kind, name, existing.get());
                    throw new CatalogException(kind + " id " + id + " already exists", e);
                }
                if (SqlErrors.isForeignKeyViolation(e)) {
                    throw new ReferenceException(kind + " " + id + " refers to a row that does not exist", e);
                }
                throw e;
            }
        });
    }

    /** Queries that must be answered through an index; a test checks each plan. Counts scan by design. */
    Map<String, String> indexedQueries() {
        Map<String, String> queries = new LinkedHashMap<>();
        queries.put(table + ".byId", statements.byId());
        queries.put(table + ".byName", statements.byName());
        queries.put(table + ".idByName", statements.idByName());
        queries.put(table + ".setState", statements.setState());
        queries.put(table + ".delete", statements.delete());
        queries.put(table + ".deleteInState", statements.deleteInState());
        queries.put(table + ".inState", statements.inState());
        queries.put(table + ".countInState", statements.countInState());
        queries.put(table + ".page", statements.page());
        return queries;
    }
}
