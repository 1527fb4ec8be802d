package io.csi4j.driver.storage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Objects;
import java.util.OptionalLong;

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
    public static final String REPLICATION = "replication";

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

    /** Each replicated volume's state on this node, {@code <id>.json} (docs/replication.md). */
    public Path replication() { return root.resolve(REPLICATION); }

    /**
     * The size of {@code pool.img} when there is one (a regular file, not followed through a link): the pool to
     * open at its own size when no size is asked for (fsck, clean-up), or to keep when {@code auto} decides.
     */
    public OptionalLong poolImageBytes() {
        try {
            BasicFileAttributes attributes = Files.readAttributes(poolImage(), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return attributes.isRegularFile() ? OptionalLong.of(attributes.size()) : OptionalLong.empty();
        } catch (NoSuchFileException e) {
            return OptionalLong.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + poolImage(), e);
        }
    }
}
