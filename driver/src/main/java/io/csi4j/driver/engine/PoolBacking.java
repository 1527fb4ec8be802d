package io.csi4j.driver.engine;

import io.csi4j.driver.os.FileStat;
import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.storage.DataDir;
import static io.csi4j.driver.storage.ByteUnits.human;
import java.util.Locale;
import java.util.Optional;

/**
 * Watches a thin pool image's backing filesystem: {@link #read} takes a {@link BackingSpace} from the machine (two
 * statfs and one stat, cheap enough for every create and every page of volumes), and {@link #prometheusText} shows it
 * on the metrics endpoint. Only a pool with an image ({@code <data-dir>/pool.img}) has one.
 */
public final class PoolBacking {
    private final DataDir dataDir;
    private final PoolReserve reserve;

    private PoolBacking(DataDir dataDir, PoolReserve reserve) {
        this.dataDir = dataDir;
        this.reserve = reserve;
    }

    /** The watch of {@code dataDir}'s pool image, empty when its pool is a plain directory. */
    public static Optional<PoolBacking> of(DataDir dataDir, PoolReserve reserve) {
        if (dataDir.poolImageBytes().isEmpty()) return Optional.empty();
        return Optional.of(new PoolBacking(dataDir, reserve));
    }

    public BackingSpace read() {
        FsStats backing = FsStats.of(dataDir.root());
        FileStat image = FileStat.of(dataDir.poolImage());
        FsStats pool = FsStats.of(dataDir.pool());
        return new BackingSpace(dataDir.root(), backing.availableBytes(), reserve.bytesOf(backing.totalBytes()), image.size(),
                image.allocatedBytes(), pool.totalBytes(), pool.availableBytes());
    }

    /** For the start-up notices. */
    public String describe() {
        BackingSpace s = read();
        return "thin pool image " + dataDir.poolImage() + ": capacity counts only what " + dataDir.root() + " can still hold, "
                + "keeping " + human(s.reserveBytes()) + " free there (--pool-reserve " + reserve + ")"
                + (s.overcommitted() ? "; " + s.condition().orElseThrow() : "");
    }

    /** The reading in the Prometheus text format (gauges, read at every scrape). */
    public String prometheusText() {
        BackingSpace s = read();
        StringBuilder out = new StringBuilder(1024);
        gauge(out, "csi4j_pool_backing_free_bytes", "Bytes free for the pool image on the filesystem beneath it.", s.backingAvailable());
        gauge(out, "csi4j_pool_backing_reserve_bytes", "Bytes the pool leaves free on the filesystem beneath it (--pool-reserve).",
                s.reserveBytes());
        gauge(out, "csi4j_pool_claimable_bytes", "Bytes the thin pool image can still take from the filesystem beneath it.",
                s.claimable());
        gauge(out, "csi4j_pool_backed_available_bytes", "The pool's free space that the filesystem beneath can really hold.",
                s.backedAvailable());
        gauge(out, "csi4j_pool_overcommitted", "1 when the pool cannot hold what it shows: volume writes may fail with EIO.",
                s.overcommitted() ? 1 : 0);
        return out.toString();
    }

    private static void gauge(StringBuilder out, String name, String help, long value) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n')
                .append("# TYPE ").append(name).append(" gauge\n")
                .append(name).append(' ').append(String.format(Locale.ROOT, "%d", value)).append('\n');
    }
}
