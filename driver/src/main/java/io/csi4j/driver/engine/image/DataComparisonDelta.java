package io.csi4j.driver.engine.image;

import io.csi4j.driver.engine.EngineErrors;
import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.os.ExtentFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CancellationException;
import java.util.function.BooleanSupplier;

/**
 * What changed between two snapshots that share no extents (a pool without reflink: snapshots are copies):
 * reads both where either holds data and compares them block by block. Holes on both sides are skipped
 * without reading; a hole reads as zeros, so data against a hole is a change only if it is not zeros.
 */
final class DataComparisonDelta implements RangeCursor {
    private static final int CHUNK = 1 << 20;

    private final ExtentFile base;
    private final ExtentFile target;
    private final long end;
    private final long block;
    private final BooleanSupplier cancelled;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment a;
    private final MemorySegment b;
    private long position;
    /** The end of the data region being compared, when inside one. */
    private long regionEnd;

    DataComparisonDelta(ExtentFile base, ExtentFile target, long from, long block, BooleanSupplier cancelled) {
        this.base = base;
        this.target = target;
        this.end = target.size();
        this.block = block;
        this.cancelled = cancelled;
        // compared in whole blocks: a resume offset inside a block starts at that block's first byte
        this.position = from;
        this.regionEnd = from;
        this.a = arena.allocate(CHUNK, 4096);
        this.b = arena.allocate(CHUNK, 4096);
    }

    @Override
    public Range next() {
        return EngineErrors.translate("comparing " + base.path() + " with " + target.path(), this::scan);
    }

    private Range scan() {
        long changedFrom = -1;
        while (position < end) {
            if (cancelled.getAsBoolean()) throw new CancellationException();
            if (position >= regionEnd && !enterRegion()) break;
            long length = Math.min(CHUNK, regionEnd - position);
            read(base, a, length, position);
            read(target, b, length, position);
            for (long at = 0; at < length; ) {
                long step = Math.min(block - Math.floorMod(position + at, block), length - at);
                boolean same = MemorySegment.mismatch(a, at, at + step, b, at, at + step) == -1;
                long offset = position + at;
                if (!same && changedFrom < 0) changedFrom = offset;
                if (same && changedFrom >= 0) {
                    position = offset;   // resume here: the next call starts after this run
                    return new Range(changedFrom, offset - changedFrom);
                }
                at += step;
            }
            position += length;
            if (changedFrom >= 0 && position >= regionEnd && !continuesAt(position)) {
                return new Range(changedFrom, position - changedFrom);
            }
        }
        return changedFrom >= 0 ? new Range(changedFrom, position - changedFrom) : null;
    }

    /** Moves to the next range where either side holds data; false when none is left. */
    private boolean enterRegion() {
        ExtentFile.Range rb = base.nextData(position);
        ExtentFile.Range rt = target.nextData(position);
        if (rb == null && rt == null) {
            position = end;
            return false;
        }
        long start = Math.min(rb == null ? Long.MAX_VALUE : rb.offset(), rt == null ? Long.MAX_VALUE : rt.offset());
        long stop = Long.MAX_VALUE;
        if (rb != null && rb.offset() == start) stop = Math.min(stop, rb.end());
        if (rt != null && rt.offset() == start) stop = Math.min(stop, rt.end());
        position = Math.max(position, alignDown(start));
        regionEnd = Math.min(end, alignUp(stop));
        return position < regionEnd;
    }

    /** Whether the next data region begins right at {@code offset}, so a changed run may go on into it. */
    private boolean continuesAt(long offset) {
        if (offset >= end) return false;
        ExtentFile.Range rb = base.nextData(offset);
        ExtentFile.Range rt = target.nextData(offset);
        return (rb != null && rb.offset() <= offset) || (rt != null && rt.offset() <= offset);
    }

    private long alignDown(long offset) { return offset - Math.floorMod(offset, block); }

    private long alignUp(long offset) {
        long r = Math.floorMod(offset, block);
        return r == 0 ? offset : offset + block - r;
    }

    /** Fills {@code length} bytes; past either file's end reads as zeros. */
    private static void read(ExtentFile file, MemorySegment buffer, long length, long offset) {
        long done = 0;
        while (done < length) {
            long n = offset + done >= file.size() ? 0 : file.read(buffer.asSlice(done), length - done, offset + done);
            if (n <= 0) {
                buffer.asSlice(done, length - done).fill((byte) 0);
                return;
            }
            done += n;
        }
    }

    @Override
    public long capacityBytes() { return end; }

    @Override
    public Method method() { return Method.DATA_COMPARISON; }

    @Override
    public void close() {
        try {
            base.close();
            target.close();
        } finally {
            arena.close();
        }
    }
}
