package io.csi4j.driver.catalog;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;

/**
 * One SQLite connection and its prepared statements, kept for the connection's life: preparing costs
 * as much as a by-id lookup. Used by one thread at a time (whoever holds the writer lock or borrowed it
 * from the reader pool), as sqlite-jdbc connections are not thread-safe.
 */
final class CatalogConnection implements AutoCloseable {
    private final Connection jdbc;
    private final Map<String, PreparedStatement> statements = new HashMap<>();

    CatalogConnection(Connection jdbc) {
        this.jdbc = jdbc;
    }

    PreparedStatement prepare(String sql) throws SQLException {
        PreparedStatement statement = statements.get(sql);
        if (statement == null) {
            statement = jdbc.prepareStatement(sql);
            statements.put(sql, statement);
        } else {
            statement.clearParameters();
        }
        return statement;
    }

    /** Runs a statement that returns no rows and is not worth caching (BEGIN, DDL, pragmas). */
    void execute(String sql) throws SQLException {
        try (Statement statement = jdbc.createStatement()) {
            statement.execute(sql);
        }
    }

    Connection jdbc() {
        return jdbc;
    }

    @Override
    public void close() throws SQLException {
        for (PreparedStatement statement : statements.values()) statement.close();
        statements.clear();
        jdbc.close();
    }
}
