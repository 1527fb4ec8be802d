package io.csi4j.driver.catalog;

import io.csi4j.sdk.CsiException;
import io.grpc.Status;

/**
 * A catalog failure. It is a {@link CsiException} so that one the domain does not handle still reaches the
 * CO with a sensible code (INTERNAL unless a subclass knows better). Messages carry ids and names, never
 * parameters, so they cannot leak anything a StorageClass author put there.
 */
public class CatalogException extends CsiException {
    public CatalogException(String message) {
        this(Status.Code.INTERNAL, message, null);
    }

    public CatalogException(String message, Throwable cause) {
        this(Status.Code.INTERNAL, message, cause);
    }

    protected CatalogException(Status.Code code, String message, Throwable cause) {
        super(code, message, cause);
    }
}
