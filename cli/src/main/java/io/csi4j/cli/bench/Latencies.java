package io.csi4j.cli.bench;

import java.util.Arrays;

/** Latencies of one RPC in nanoseconds: a growable array, sorted once for the percentiles. Not thread-safe: one per worker. */
final class Latencies {
    private long[] values = new long[256];
    private int size;

    void add(long nanos) {
        if (size == values.length) values = Arrays.copyOf(values, size * 2);
        values[size++] = nanos;
    }

    void addAll(Latencies other) {
        if (size + other.size > values.length) values = Arrays.copyOf(values, Math.max(values.length * 2, size + other.size));
        System.arraycopy(other.values, 0, values, size, other.size);
        size += other.size;
    }

    int size() {
        return size;
    }

    /** The samples, sorted ascending. */
    long[] sorted() {
        long[] copy = Arrays.copyOf(values, size);
        Arrays.sort(copy);
        return copy;
    }

    /** Nearest-rank percentile of sorted samples: the smallest sample with at least p% of the samples at or below it. */
    static long percentile(long[] sorted, double p) {
        if (sorted.length == 0) return 0;
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.clamp(rank - 1, 0, sorted.length - 1)];
    }
}
