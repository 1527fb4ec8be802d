package io.csi4j.driver.mobility;

import io.csi4j.driver.engine.RangeCursor;
import java.util.Arrays;
import java.util.Optional;

/**
 * The ranges of one pass of a cursor, held so a sender walks its source once: their total (what progress and the
 * header promise) is known before the first range is sent, and the second walk of the extent maps that counting
 * used to cost is gone. Bounded: a cursor with more than {@code limit} ranges is not held (the caller walks it twice
 * instead, as a cursor is meant to be used: never the whole map in memory).
 */
final class HeldRanges implements RangeCursor {
    /** Ranges held at most: 16 bytes each, so 1 MiB; a replication round's delta holds far fewer. */
    static final int LIMIT = 1 << 16;

    private final RangeCursor source;
    private final long[] offsets;
    private final long[] lengths;
    private final int count;
    private final long totalBytes;
    private int next;

    private HeldRanges(RangeCursor source, long[] offsets, long[] lengths, int count, long totalBytes) {
        this.source = source;
        this.offsets = offsets;
        this.lengths = lengths;
        this.count = count;
        this.totalBytes = totalBytes;
    }

    /**
     * Every range of {@code cursor}, held; empty (the cursor closed) when it has more than {@code limit}. The held
     * ranges own the cursor: closing them closes it.
     */
    static Optional<HeldRanges> hold(RangeCursor cursor, int limit) {
        long[] offsets = new long[Math.min(limit, 64)];
        long[] lengths = new long[offsets.length];
        int count = 0;
        long total = 0;
        try {
            for (Range r = cursor.next(); r != null; r = cursor.next()) {
                if (count == limit) {
                    cursor.close();
                    return Optional.empty();
                }
                if (count == offsets.length) {
                    int grown = (int) Math.min(limit, 2L * offsets.length);
                    offsets = Arrays.copyOf(offsets, grown);
                    lengths = Arrays.copyOf(lengths, grown);
                }
                offsets[count] = r.offset();
                lengths[count] = r.length();
                count++;
                total += r.length();
            }
        } catch (RuntimeException e) {
            cursor.close();
            throw e;
        }
        return Optional.of(new HeldRanges(cursor, offsets, lengths, count, total));
    }

    /** Bytes the held ranges cover. */
    long totalBytes() { return totalBytes; }

    @Override
    public Range next() {
        return next < count ? new Range(offsets[next], lengths[next++]) : null;
    }

    @Override
    public long capacityBytes() { return source.capacityBytes(); }

    @Override
    public Method method() { return source.method(); }

    @Override
    public void close() {
        source.close();
    }
}
