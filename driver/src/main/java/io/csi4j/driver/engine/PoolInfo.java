package io.csi4j.driver.engine;

import java.nio.file.Path;

/**
 * The pool volumes live in: where, on which filesystem, whether it reflinks, how full it is.
 * {@code provisionedBytes} is the sum of the volumes' nominal sizes (thin: mostly unallocated);
 * {@code allocatableBytes} is the largest volume that can be created now (what GetCapacity reports).
 */
public record PoolInfo(Path path, String filesystem, boolean reflink, long totalBytes, long availableBytes,
                       long provisionedBytes, long allocatableBytes) {

    /**
     * Thin provisioning with an overcommit ratio: a new volume is bounded by the unpromised share of
     * {@code ratio x total}, and by {@code ratio x} the space really free.
     */
    public static long allocatable(long totalBytes, long availableBytes, long provisionedBytes, double overcommitRatio) {
        long promisable = (long) Math.floor(overcommitRatio * totalBytes) - provisionedBytes;
        long backed = (long) Math.floor(overcommitRatio * availableBytes);
        return Math.max(0, Math.min(promisable, backed));
    }
}
