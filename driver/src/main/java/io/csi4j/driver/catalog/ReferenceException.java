package io.csi4j.driver.catalog;


/**
 * A foreign key refused the change: the row it refers to does not exist (insert), or rows still refer to
 * the row being deleted (a volume with publications, a group snapshot with member snapshots).
 */
public final class ReferenceException extends CatalogException {
    public ReferenceException(String message, Throwable cause) {
        super(Reason.IN_USE, message, cause);
    }
}
