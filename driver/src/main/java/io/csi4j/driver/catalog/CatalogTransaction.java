package io.csi4j.driver.catalog;

import java.time.InstantSource;

/**
 * The tables as seen inside {@link Catalog#inTransaction}: every statement runs on the writer connection
 * in one transaction, and reads see its own uncommitted writes. Valid only in the body, on its thread.
 */
public final class CatalogTransaction extends CatalogTables {
    CatalogTransaction(Session session, InstantSource clock) {
        super(session, clock);
    }
}
