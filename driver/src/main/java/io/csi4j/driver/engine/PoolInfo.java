package io.csi4j.driver.engine;

import java.nio.file.Path;

/**
 * The pool volumes live in: where, on which filesystem, whether it reflinks, how full it is.
 * {@code provisionedBytes} is the sum of the volumes' nominal sizes (thin: most of it unallocated);
 * {@code overcommitRatio} is how many times the pool's size may be promised to volumes.
 */
public record PoolInfo(Path path, String filesystem, boolean reflink, long totalBytes, long availableBytes,
                       long provisionedBytes, double overcommitRatio) {

    /**
     * Largest volume that can be created now (what GetCapacity reports): bounded by the unpromised
     * share of {@code overcommitRatio x total}, and by {@code overcommitRatio x} the space really free.
     */
    public long allocatableBytes() {
        long promisable = (long) Math.floor(overcommitRatio * totalBytes) - provisionedBytes;
        long backed = (long) Math.floor(overcommitRatio * availableBytes);
        return Math.max(0, Math.min(promisable, backed));
    }
}
