package io.csi4j.driver.engine.image;

import io.csi4j.driver.engine.EngineErrors;
import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.os.ExtentFile;
import io.csi4j.driver.os.ExtentFile.Extent;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.function.BooleanSupplier;

/**
 * What changed between two reflinked files of one volume's image (points, the image), from their physical extents
 * alone. The premise (docs/replication.md, "What rounds rely on"): <b>shared blocks are never written in place</b>
 * (XFS copies a shared block on write; FICLONE and FICLONERANGE only remap), so where both map the very same physical
 * block at an offset they read the same bytes there, and a write moved the writer's side elsewhere. A base whose
 * extents were read earlier ({@link #allExtents}) must not be written or remapped until the compare is done (a point is
 * never written): a block it gave up could be reused by the target and look shared. A range is reported where the
 * physical addresses differ, where only one side has written data, or where an extent's address means nothing
 * (delayed, inline, encoded): the answer may hold a few unchanged blocks, never miss a change.
 */
final class SharedExtentDelta implements RangeCursor {
    /** Extents asked of the kernel per FIEMAP call: one window, whatever the images' size. */
    static final int WINDOW = 512;

    private final ExtentFile base;      // null: its extents read before
    private final ExtentFile target;    // null: its extents read before
    private final String what;
    private final Walker baseExtents;
    private final Walker targetExtents;
    private final long end;
    private final BooleanSupplier cancelled;
    private long position;

    SharedExtentDelta(ExtentFile base, ExtentFile target, long from, BooleanSupplier cancelled) {
        this(base, new Walker(base), target, new Walker(target), target.size(), base.path() + " and " + target.path(), from, cancelled);
    }

    /**
     * Against a base whose extents were all read before ({@link #allExtents}, in logical order): a base no one writes
     * until the compare is done, walked outside a freeze (IncrementalCut). Closing closes only the target.
     */
    SharedExtentDelta(List<Extent> baseExtents, ExtentFile target, long from, BooleanSupplier cancelled) {
        this(null, new Walker(baseExtents), target, new Walker(target), target.size(), "a base and " + target.path(), from, cancelled);
    }

    /** Between two files whose extents were both read before, of {@code size} bytes: no system call at all. */
    static SharedExtentDelta between(List<Extent> baseExtents, List<Extent> targetExtents, long size) {
        return new SharedExtentDelta(null, new Walker(baseExtents), null, new Walker(targetExtents), size, "two extent lists", 0, () -> false);
    }

    private SharedExtentDelta(ExtentFile base, Walker baseExtents, ExtentFile target, Walker targetExtents, long end, String what,
                              long from, BooleanSupplier cancelled) {
        this.base = base;
        this.target = target;
        this.what = what;
        this.baseExtents = baseExtents;
        this.targetExtents = targetExtents;
        this.end = end;
        this.position = from;
        this.cancelled = cancelled;
    }

    /** Every extent of {@code file}, in logical order; null when there are more than {@code max}. */
    static List<Extent> allExtents(ExtentFile file, int max) {
        List<Extent> all = new java.util.ArrayList<>();
        Walker walker = new Walker(file);
        for (long at = 0; ; ) {
            Extent e = walker.at(at);
            if (e == null) return all;
            if (all.size() == max) return null;
            all.add(e);
            at = e.end();
        }
    }

    @Override
    public Range next() {
        return EngineErrors.translate("comparing extents of " + what, this::scan);
    }

    private Range scan() {
        long changedFrom = -1;
        while (position < end) {
            if (cancelled.getAsBoolean()) throw new CancellationException();
            Extent b = baseExtents.at(position);
            Extent t = targetExtents.at(position);
            boolean inB = b != null && b.logical() <= position;
            boolean inT = t != null && t.logical() <= position;
            long boundary = Math.min(end, Math.min(boundaryOf(b, inB), boundaryOf(t, inT)));
            boolean changed = (inB || inT) && differ(inB ? b : null, inT ? t : null, position);
            if (changed) {
                if (changedFrom < 0) changedFrom = position;
            } else if (changedFrom >= 0) {
                return new Range(changedFrom, position - changedFrom);
            }
            position = boundary;
        }
        return changedFrom >= 0 ? new Range(changedFrom, position - changedFrom) : null;
    }

    private static long boundaryOf(Extent e, boolean inside) {
        if (e == null) return Long.MAX_VALUE;
        return inside ? e.end() : e.logical();
    }

    /** Whether the content at {@code at} may differ, given the extent each side maps there (null: a hole). */
    static boolean differ(Extent b, Extent t, long at) {
        boolean dataB = b != null && !b.unwritten();
        boolean dataT = t != null && !t.unwritten();
        if (!dataB && !dataT) return false;          // both read as zeros
        if (dataB != dataT) return true;
        if (b.opaque() || t.opaque()) return true;   // no address to trust: assume a change
        return b.physical() + (at - b.logical()) != t.physical() + (at - t.logical());
    }

    /** One image's extents, fetched one window at a time as the position moves forward. */
    private static final class Walker {
        private final ExtentFile file;
        private List<Extent> window = List.of();
        private int index;
        private boolean exhausted;

        Walker(ExtentFile file) {
            this.file = file;
        }

        /** All of a file's extents, read before: nothing more to fetch. */
        Walker(List<Extent> all) {
            this.file = null;
            this.window = all;
            this.exhausted = true;
        }

        /** The extent holding {@code position}, else the next one after it, else null. */
        Extent at(long position) {
            while (true) {
                while (index < window.size() && window.get(index).end() <= position) index++;
                if (index < window.size()) return window.get(index);
                if (exhausted) return null;
                window = file.extents(position, WINDOW);
                index = 0;
                exhausted = window.isEmpty() || window.getLast().last() || window.size() < WINDOW;
                if (window.isEmpty()) return null;
            }
        }
    }

    @Override
    public long capacityBytes() { return end; }

    @Override
    public Method method() { return Method.SHARED_EXTENTS; }

    @Override
    public void close() {
        try {
            if (base != null) base.close();
        } finally {
            if (target != null) target.close();
        }
    }
}
