package io.csi4j.driver.engine;

/**
 * What a thin pool image leaves free on the filesystem beneath it ({@code --pool-reserve}): a size, or a share of that
 * filesystem. The pool never counts the reserve as its own: an auto pool is made that much smaller than the free space,
 * and capacity shrinks to nothing before other writers and the pool together eat into it.
 */
public record PoolReserve(long bytes, int percent) {

    /**
     * 10% of the backing filesystem: the kubelet's default hard eviction threshold ({@code nodefs.available<10%}), so a
     * node whose pool lives on its root disk stops taking new volumes before the kubelet starts evicting pods.
     */
    public static final PoolReserve DEFAULT = percent(10);

    public PoolReserve {
        if (bytes < 0) throw new IllegalArgumentException("pool reserve must not be negative: " + bytes);
        if (percent < 0 || percent > 90) throw new IllegalArgumentException("pool reserve must be 0% to 90%, not " + percent + "%");
        if (bytes > 0 && percent > 0) throw new IllegalArgumentException("a pool reserve is a size or a share, not both");
    }

    public static PoolReserve bytes(long bytes) {
        return new PoolReserve(bytes, 0);
    }

    public static PoolReserve percent(int percent) {
        return new PoolReserve(0, percent);
    }

    /** The reserve in bytes on a backing filesystem of {@code backingTotalBytes}. */
    public long bytesOf(long backingTotalBytes) {
        return percent > 0 ? backingTotalBytes / 100 * percent + backingTotalBytes % 100 * percent / 100 : bytes;
    }

    @Override
    public String toString() {
        return percent > 0 ? percent + "%" : bytes + " bytes";
    }
}
