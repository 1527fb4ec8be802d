package io.csi4j.driver.catalog;

import java.nio.file.Path;

/**
 * The catalog file is gone (or empty) while the pool still holds volumes or snapshots. Starting with a
 * new, empty catalog would silently orphan every one of them, so the driver refuses to start.
 */
public final class CatalogMissingException extends CatalogException {
    public CatalogMissingException(Path file, int volumes, int snapshots) {
        super("catalog " + file + " is missing or empty, but the pool holds " + volumes + " volumes and " + snapshots
                + " snapshots; starting would orphan them. Rebuild the catalog from the pool with `csi4j fsck --data-dir "
                + file.getParent() + " --rebuild`, or restore it from a backup");
    }
}
