package io.csi4j.driver.catalog;

import java.sql.SQLException;

/**
 * Where a table's statements run: either each on its own (reads on a pooled read-only connection, writes
 * on the writer under the lock, autocommit) or all on the writer inside one transaction.
 */
interface Session {
    <T> T read(Work<T> work);

    <T> T write(Work<T> work);

    @FunctionalInterface
    interface Work<T> {
        T run(CatalogConnection connection) throws SQLException;
    }
}
