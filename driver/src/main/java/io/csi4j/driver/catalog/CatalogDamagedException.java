package io.csi4j.driver.catalog;

import java.nio.file.Path;

/** The catalog file is not a database or fails SQLite's consistency check: restore it from a backup. */
public final class CatalogDamagedException extends CatalogException {
    public CatalogDamagedException(Path file, String problem, Throwable cause) {
        super("catalog " + file + " is damaged (" + problem + "); the driver cannot trust it: rebuild it from the "
                + "pool with `csi4j fsck --data-dir " + file.getParent() + " --rebuild` (the damaged file is kept "
                + "aside), or restore it from a backup", cause);
    }
}
