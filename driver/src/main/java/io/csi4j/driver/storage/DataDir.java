package io.csi4j.driver.storage;

import java.nio.file.Path;
import java.util.Objects;

/**
 * What lives in the plugin's data directory, named once: the sockets it serves on by default, the pool (a
 * directory, or the mount point of {@code pool.img}), the catalog and the page-token key.
 */
public record DataDir(Path root) {
    public static final String CSI_SOCKET = "csi.sock";
    public static final String ADDONS_SOCKET = "csi-addons.sock";
    public static final String POOL = "pool";
    public static final String POOL_IMAGE = "pool.img";
    public static final String CATALOG = "catalog.db";
    public static final String PAGE_TOKEN_KEY = "page-token.key";

    public DataDir {
        Objects.requireNonNull(root, "root");
    }

    public Path csiSocket() { return root.resolve(CSI_SOCKET); }

    public Path addonsSocket() { return root.resolve(ADDONS_SOCKET); }

    /** {@code unix://<data-dir>/csi.sock}: where {@code serve} listens unless told otherwise. */
    public String csiEndpoint() { return "unix://" + csiSocket(); }

    public String addonsEndpoint() { return "unix://" + addonsSocket(); }

    public Path pool() { return root.resolve(POOL); }

    public Path poolImage() { return root.resolve(POOL_IMAGE); }

    public Path catalog() { return root.resolve(CATALOG); }

    public Path pageTokenKey() { return root.resolve(PAGE_TOKEN_KEY); }
}
