package io.csi4j.driver.catalog;

import java.nio.file.Path;

/** The catalog was written by a newer csi4j whose schema this code does not know: never guess, refuse. */
public final class CatalogVersionException extends CatalogException {
    public CatalogVersionException(Path file, int found, int known) {
        super("catalog " + file + " has schema version " + found + " but this csi4j knows versions up to "
                + known + "; it was written by a newer csi4j: run that version (downgrades are not supported)");
    }
}
