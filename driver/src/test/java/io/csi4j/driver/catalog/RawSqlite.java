package io.csi4j.driver.catalog;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/** Plain JDBC access to a catalog file, bypassing the Catalog, for tests that inspect or tamper. */
final class RawSqlite {
    private RawSqlite() {}

    /** Every row of the query, its columns joined with '|'. */
    static List<String> query(Path file, String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
                Statement s = c.createStatement();
                ResultSet r = s.executeQuery(sql)) {
            List<String> rows = new ArrayList<>();
            int columns = r.getMetaData().getColumnCount();
            while (r.next()) {
                StringBuilder row = new StringBuilder();
                for (int i = 1; i <= columns; i++) row.append(i > 1 ? "|" : "").append(r.getString(i));
                rows.add(row.toString());
            }
            return rows;
        }
    }

    static void execute(Path file, String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
