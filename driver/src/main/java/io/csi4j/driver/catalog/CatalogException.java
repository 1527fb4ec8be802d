package io.csi4j.driver.catalog;

import io.csi4j.driver.storage.StorageException;
import io.csi4j.driver.storage.StorageException.Reason;

/**
 * A catalog failure. It is a {@link StorageException} so that one the domain does not handle still reaches the
 * CO with a sensible code (FAILED, so INTERNAL, unless a subclass knows better). Messages carry ids and names, never
 * parameters, so they cannot leak anything a StorageClass author put there.
 */
public class CatalogException extends StorageException {
    public CatalogException(String message) {
        this(Reason.FAILED, message, null);
    }

    public CatalogException(String message, Throwable cause) {
        this(Reason.FAILED, message, cause);
    }

    protected CatalogException(Reason reason, String message, Throwable cause) {
        super(reason, message, cause);
    }
}
