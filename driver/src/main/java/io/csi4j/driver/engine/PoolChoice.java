package io.csi4j.driver.engine;

import static io.csi4j.driver.storage.ByteUnits.human;

import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.os.Reflink;
import io.csi4j.driver.storage.DataDir;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.stream.Stream;

/**
 * The pool a plugin started without a pool size gets: the fast one. Snapshots and clones are only instant
 * on a filesystem that reflinks, so when the data directory's own filesystem cannot (ext4, the usual
 * {@code /var/lib}), the plugin makes itself a thin XFS pool image there once and adopts it on every later
 * start. The rule is pure ({@link #decide}); {@link Facts#of} reads the facts it needs from the machine.
 */
public final class PoolChoice {
    private PoolChoice() {}

    static final long GIB = 1L << 30;
    /** Smallest pool made on our own: below this a user trips over it at the first few volumes. */
    static final long MIN_DEFAULT_BYTES = GIB;

    /** What {@link Pool#open} is given, and the reason, for the start-up line. */
    public sealed interface Choice {
        String reason();

        /** The size argument of {@link Pool#open}. */
        default OptionalLong poolSize() {
            return switch (this) {
                case Directory d -> OptionalLong.empty();
                case Image i -> OptionalLong.of(i.bytes());
            };
        }
    }

    /** Serve from {@code <data-dir>/pool} on the data directory's filesystem. */
    public record Directory(String reason) implements Choice {}

    /** Serve from the XFS image {@code <data-dir>/pool.img} of this size (thin: it costs what is written). */
    public record Image(long bytes, String reason) implements Choice {}

    /** Refused: neither choice is safe (too little space for a pool of our own). */
    public static final class Refused extends IllegalStateException {
        public Refused(String message) { super(message); }
    }

    /**
     * @param imageBytes        size of an existing {@code pool.img}, empty when there is none
     * @param directoryReflinks the data directory's filesystem can reflink (xfs with reflink, btrfs)
     * @param poolHasEntries    {@code <data-dir>/pool} already holds something (an earlier directory pool)
     * @param freeBytes         space left for unprivileged users on the data directory's filesystem
     * @param totalBytes        that filesystem's size (a {@link PoolReserve} may be a share of it)
     */
    public record Facts(OptionalLong imageBytes, String filesystem, boolean directoryReflinks, boolean poolHasEntries,
                        long freeBytes, long totalBytes) {

        public static Facts of(DataDir dataDir) {
            Path pool = dataDir.pool();
            try {
                Files.createDirectories(pool);
                OptionalLong imageBytes = dataDir.poolImageBytes();
                boolean entries;
                try (Stream<Path> list = Files.list(pool)) {
                    entries = list.findAny().isPresent();
                }
                FsStats stats = FsStats.of(dataDir.root());
                // a pool image mounted on pool/ says nothing of the data directory's own filesystem
                boolean reflinks = imageBytes.isEmpty() && Reflink.isSupported(pool);
                return new Facts(imageBytes, stats.type(), reflinks, entries, stats.availableBytes(), stats.totalBytes());
            } catch (IOException e) {
                throw new UncheckedIOException("reading data directory " + dataDir.root(), e);
            }
        }
    }

    /**
     * The rule, first match wins:
     * <ol>
     * <li>a {@code pool.img} exists: adopt it at its own size (a restart, or a pool made with an explicit size);</li>
     * <li>the data directory's filesystem reflinks: serve from it directly, nothing to gain from an image;</li>
     * <li>{@code pool/} already holds an earlier directory pool: keep serving it (an image mounted over it would
     *     hide its volumes), and say how to move;</li>
     * <li>else make a thin XFS image as large as the free space of the filesystem it lives on less the
     *     {@code reserve}, in whole GiB: nothing is spent until written, and the reserve stays free for the node
     *     (the kubelet evicts pods when its disk runs low) and as the margin in which the plugin refuses new volumes
     *     and reports the pool abnormal before a write can fail ({@link BackingSpace}). Less than
     *     {@link #MIN_DEFAULT_BYTES} left is refused.</li>
     * </ol>
     */
    public static Choice decide(Facts f, PoolReserve reserve) {
        if (f.imageBytes().isPresent()) {
            return new Image(f.imageBytes().getAsLong(), "adopting the existing pool image");
        }
        if (f.directoryReflinks()) {
            return new Directory(f.filesystem() + " reflinks: the data directory is the pool");
        }
        if (f.poolHasEntries()) {
            return new Directory("the data directory already holds a directory pool on " + f.filesystem()
                    + " (no reflink: snapshots are full copies); kept so its volumes stay visible");
        }
        long reserveBytes = reserve.bytesOf(f.totalBytes());
        long bytes = Math.max(0, f.freeBytes() - reserveBytes) / GIB * GIB;
        if (bytes < MIN_DEFAULT_BYTES) {
            throw new Refused("only " + human(f.freeBytes()) + " free on the data directory's " + f.filesystem()
                    + " filesystem, " + human(reserveBytes) + " of it kept free (--pool-reserve " + reserve + "): too little for "
                    + "a pool of its own (at least 1 GiB); give --pool-size SIZE, a smaller --pool-reserve, "
                    + "or --pool-size 0 to serve from the directory itself (snapshots are then full copies)");
        }
        return new Image(bytes, f.filesystem() + " cannot reflink: a thin XFS pool image of " + bytes / GIB
                + " GiB (the free space less the " + human(reserveBytes) + " reserve) holds the volumes");
    }
}
