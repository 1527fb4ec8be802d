package io.csi4j.driver.catalog;

import io.csi4j.driver.model.Page;
import io.csi4j.driver.model.State;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Statement plumbing shared by the tables: binding, mapping, keyset pages, and time as epoch nanos. */
final class Rows {
    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private Rows() {}

    @FunctionalInterface
    interface Mapper<T> {
        T map(ResultSet row) throws SQLException;
    }

    /** Epoch nanoseconds: an INTEGER column that sorts and keeps CSI's nanosecond creation_time (1677..2262). */
    static long nanos(Instant t) {
        return Math.addExact(Math.multiplyExact(t.getEpochSecond(), NANOS_PER_SECOND), t.getNano());
    }

    static Instant instant(long nanos) {
        return Instant.ofEpochSecond(Math.floorDiv(nanos, NANOS_PER_SECOND), Math.floorMod(nanos, NANOS_PER_SECOND));
    }

    static PreparedStatement bind(CatalogConnection c, String sql, Object... args) throws SQLException {
        PreparedStatement statement = c.prepare(sql);
        for (int i = 0; i < args.length; i++) statement.setObject(i + 1, args[i]);
        return statement;
    }

    static int update(CatalogConnection c, String sql, Object... args) throws SQLException {
        return bind(c, sql, args).executeUpdate();
    }

    static <T> Optional<T> one(CatalogConnection c, String sql, Mapper<T> mapper, Object... args)
            throws SQLException {
        try (ResultSet row = bind(c, sql, args).executeQuery()) {
            return row.next() ? Optional.of(mapper.map(row)) : Optional.empty();
        }
    }

    static <T> List<T> list(CatalogConnection c, String sql, Mapper<T> mapper, Object... args) throws SQLException {
        List<T> out = new ArrayList<>();
        try (ResultSet row = bind(c, sql, args).executeQuery()) {
            while (row.next()) out.add(mapper.map(row));
        }
        return out;
    }

    static long count(CatalogConnection c, String sql, Object... args) throws SQLException {
        try (ResultSet row = bind(c, sql, args).executeQuery()) {
            row.next();
            return row.getLong(1);
        }
    }

    /**
     * Runs a keyset query whose last two parameters are {@code seq > ?} and {@code LIMIT ?}: it asks for one
     * row more than the page holds, which tells whether another page exists without a second query.
     */
    static <T> Page<T> page(CatalogConnection c, String sql, Mapper<T> mapper, long afterSeq, int limit,
            Object... filters) throws SQLException {
        if (limit < 1) throw new IllegalArgumentException("page limit must be at least 1: " + limit);
        Object[] args = new Object[filters.length + 2];
        System.arraycopy(filters, 0, args, 0, filters.length);
        args[filters.length] = afterSeq;
        args[filters.length + 1] = limit + 1L;
        List<T> items = new ArrayList<>(Math.min(limit, 1024));
        long lastSeq = afterSeq;
        boolean more = false;
        try (ResultSet row = bind(c, sql, args).executeQuery()) {
            while (row.next()) {
                if (items.size() == limit) {
                    more = true;
                    break;
                }
                items.add(mapper.map(row));
                lastSeq = row.getLong(1);  // every page query selects seq first
            }
        }
        return new Page<>(items, lastSeq, more);
    }

    /** SQL for the index of a TEXT column's value among {@code names} (-1 for any other text). */
    static String indexOf(String column, String... names) {
        StringBuilder sql = new StringBuilder("CASE ").append(column);
        for (int i = 0; i < names.length; i++) sql.append(" WHEN '").append(names[i]).append("' THEN ").append(i);
        return sql.append(" ELSE -1 END").toString();
    }

    /** A column selected with {@link #indexOf}. */
    static int index(ResultSet row, int column, String name) throws SQLException {
        int index = row.getInt(column);
        if (index < 0) throw new CatalogException("the catalog holds an unknown " + name + " in a row");
        return index;
    }

    static State state(ResultSet row) throws SQLException {
        return State.valueOf(row.getString("state"));
    }
}
