package io.csi4j.driver.engine.image;

import io.csi4j.driver.storage.ByteCount;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.PoolInfo;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.storage.StorageException;
import java.io.IOException;
import java.nio.file.Files;
import java.util.function.Supplier;

/**
 * Capacity accounting of thin images: what the volumes are promised (their images' sizes, and those being made right
 * now), and refusing a promise beyond the overcommitted share of the pool. Only the check and the arithmetic hold the
 * lock: the I/O of concurrent creates runs in parallel.
 */
final class ImageCapacity {
    private final double overcommitRatio;
    private final Supplier<PoolInfo> pool;
    private final Object provisioning = new Object();
    /**
     * Bytes of the volume images in the pool, counted once at open and kept up to date by every change
     * here, so that a create does not stat every image (that made it O(volumes)). Guarded by provisioning.
     */
    private long provisionedBytes;
    /** Sizes of volumes being created, restored or cloned right now: promised, not yet in provisionedBytes. */
    private long reservedBytes;

    /** {@code pool} reads the pool's numbers, with {@link #provisioned} among them. */
    ImageCapacity(PoolLayout layout, double overcommitRatio, Supplier<PoolInfo> pool) {
        this.overcommitRatio = overcommitRatio;
        this.pool = pool;
        this.provisionedBytes = countProvisioned(layout);
    }

    /** Thin: bounded by the overcommitted share of the pool that is not promised yet. */
    long allocatable(FsStats stats, long provisioned) {
        return PoolInfo.allocatable(stats.totalBytes(), stats.availableBytes(), provisioned, overcommitRatio);
    }

    long provisioned() {
        synchronized (provisioning) {
            return provisionedBytes + reservedBytes;
        }
    }

    /**
     * Promises {@code size} bytes to a volume being made (NO_SPACE if the pool cannot), until
     * {@link #settle} turns the promise into provisioned bytes or drops it.
     */
    void reserve(long size, String what) {
        synchronized (provisioning) {
            requireRoom(size, what);
            reservedBytes += size;
        }
    }

    /** Drops {@code reserved} bytes of promise and counts {@code provisioned} bytes of image (negative: freed). */
    void settle(long reserved, long provisioned) {
        synchronized (provisioning) {
            reservedBytes -= reserved;
            provisionedBytes += provisioned;
        }
    }

    /** Grows an image by {@code bytes} with {@code grow}, refused with NO_SPACE when the pool cannot promise them. */
    void grow(long bytes, String what, Runnable grow) {
        synchronized (provisioning) {
            requireRoom(bytes, what);
            grow.run();
            provisionedBytes += bytes;
        }
    }

    private void requireRoom(long bytes, String what) {
        PoolInfo info = pool.get();
        if (bytes > info.allocatableBytes()) {
            throw StorageException.noSpace(what + " needs " + ByteCount.describe(bytes) + "; the pool can promise "
                    + ByteCount.describe(info.allocatableBytes()) + " more (total " + info.totalBytes() + ", available " + info.availableBytes()
                    + ", provisioned " + info.provisionedBytes() + ", overcommit " + overcommitRatio + ")");
        }
    }

    private static long countProvisioned(PoolLayout layout) {
        long sum = 0;
        for (String id : layout.ids(Artifact.Kind.VOLUME)) {
            try {
                sum += Files.size(layout.artifact(Artifact.Kind.VOLUME, id));
            } catch (IOException e) {
                // deleted meanwhile
            }
        }
        return sum;
    }
}
