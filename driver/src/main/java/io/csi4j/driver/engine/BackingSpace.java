package io.csi4j.driver.engine;

import static io.csi4j.driver.storage.ByteUnits.human;

import java.nio.file.Path;
import java.util.Optional;

/**
 * One reading of a thin pool image and the filesystem beneath it, and the pure rules on it. The image is sparse:
 * a block the pool's filesystem writes for the first time takes a block of the backing filesystem then, and fails
 * (EIO inside a volume's filesystem) when that one has none left, because anyone else may have taken it. So the
 * pool may only count what the backing filesystem can still give it, minus a reserve.
 *
 * @param backingDir       the data directory, on the backing filesystem
 * @param backingAvailable bytes free for unprivileged writers on the backing filesystem
 * @param reserveBytes     what the pool leaves free there ({@link PoolReserve})
 * @param imageBytes       the image's size
 * @param imageAllocated   bytes the image really takes on the backing filesystem
 * @param poolTotal        the pool filesystem's size
 * @param poolAvailable    bytes free in the pool filesystem
 */
public record BackingSpace(Path backingDir, long backingAvailable, long reserveBytes, long imageBytes, long imageAllocated,
                           long poolTotal, long poolAvailable) {

    /** Bytes the pool's filesystem uses (data, metadata, log). */
    public long poolUsed() {
        return Math.max(0, poolTotal - poolAvailable);
    }

    /** What the image holds outside the pool's counted blocks: XFS's internal log (written at mkfs, so allocated). */
    public long overhead() {
        return Math.max(0, imageBytes - poolTotal);
    }

    /** Free in the pool and already allocated in the image (freed by deletes): written again at no cost beneath. */
    public long slack() {
        return Math.max(0, Math.min(poolAvailable, imageAllocated - poolUsed() - overhead()));
    }

    /** The most the pool's filesystem can still take from the backing filesystem: its free space over the image's holes. */
    public long claimable() {
        return Math.max(0, Math.min(poolAvailable - slack(), imageBytes - imageAllocated));
    }

    /** The pool's free space that is really there: min(pool free, slack + backing free - reserve). */
    public long backedAvailable() {
        return Math.min(poolAvailable, slack() + Math.max(0, backingAvailable - reserveBytes));
    }

    /** The pool's size as far as it is backed: what it uses plus {@link #backedAvailable}. */
    public long backedTotal() {
        return poolUsed() + backedAvailable();
    }

    /** The largest new volume: the thin-provisioning rule of {@link PoolInfo#allocatable} on the backed figures. */
    public long allocatable(long provisionedBytes, double overcommitRatio) {
        return PoolInfo.allocatable(backedTotal(), backedAvailable(), provisionedBytes, overcommitRatio);
    }

    /** The pool cannot hold what it shows: the backing filesystem has less free than the image may still claim. */
    public boolean overcommitted() {
        return backingAvailable < claimable();
    }

    /** Why every volume of this pool is at risk, when it is: the volume condition's message. */
    public Optional<String> condition() {
        if (!overcommitted()) return Optional.empty();
        return Optional.of("the thin pool image's filesystem " + backingDir + " has " + human(backingAvailable)
                + " free, less than the " + human(claimable()) + " the pool can still write into it: writes into this volume "
                + "may fail with I/O errors (EIO) and its filesystem may turn read-only; free space on " + backingDir
                + " (keep " + human(reserveBytes) + " free there)");
    }

    /** Why a new volume of {@code bytes} is refused when the backing space is what limits it, for RESOURCE_EXHAUSTED. */
    public String refusal(long bytes, long allocatable) {
        return human(bytes) + " asked, " + human(allocatable) + " can be promised: the pool image's backing filesystem "
                + backingDir + " has " + human(backingAvailable) + " free and " + human(reserveBytes) + " of it is kept free"
                + (overcommitted() ? ", and the pool already cannot hold what its volumes may write (" + human(claimable()) + ")" : "");
    }
}
