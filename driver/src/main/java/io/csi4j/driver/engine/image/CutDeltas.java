package io.csi4j.driver.engine.image;

import io.csi4j.driver.engine.RangeCursor;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What an incremental cut found changed ({@link IncrementalCut}), kept in memory for the sender's delta of the same two
 * points, the base and the new one ({@link ImageBlockMaps#changedRanges}): the round's copy reads its ranges instead of
 * walking both points' extent maps again (two FIEMAP walks a round, whose cost follows the images' extent counts).
 * <p>Sound as {@link SharedExtentDelta} is (shared blocks are never written in place): the ranges are where the new
 * point's file differed from the base after the cut's pass before the freeze, joined with those the freeze's pass
 * cloned ({@link #union}); a byte in neither read as the base's after the first pass and was not changed by the second
 * ({@link IncrementalCut} has the argument), so the point differs from the base nowhere else. It also needs both points unchanged while remembered, which the id rule gives (a point's file is
 * never written while its id names it: docs/replication.md, "What rounds rely on").
 * The last cut of each volume only (replaced by its next, dropped with the volume); at most {@link #MAX_RANGES} ranges,
 * else nothing kept (the walks as before). Lost with the agent: the walks again.
 */
final class CutDeltas {
    static final int MAX_RANGES = 16 * 1024;

    /** The ranges where {@code target} differs from {@code base}, ascending, none touching; its size. */
    record Delta(String base, String target, long sizeBytes, List<RangeCursor.Range> ranges) {}

    private final Map<String, Delta> byVolume = new ConcurrentHashMap<>();

    void remember(String volumeId, Delta delta) {
        if (delta.ranges().size() <= MAX_RANGES) byVolume.put(volumeId, delta);
        else byVolume.remove(volumeId);
    }

    /** Forgets the volume's cut (a cut that went whole, or failed, has no delta to offer). */
    void forget(String volumeId) {
        byVolume.remove(volumeId);
    }

    /** The delta between these two points, when a cut here made {@code target} from {@code base}. */
    Optional<Delta> between(String base, String target) {
        return byVolume.values().stream().filter(d -> d.base().equals(base) && d.target().equals(target)).findFirst();
    }

    /**
     * Both lists' ranges (each ascending, none touching) as one such list: overlapping or touching ranges joined; null
     * when either is null or the union holds more than {@link #MAX_RANGES} (nothing kept, as for one list past it).
     */
    static List<RangeCursor.Range> union(List<RangeCursor.Range> a, List<RangeCursor.Range> b) {
        if (a == null || b == null) return null;
        List<RangeCursor.Range> all = new java.util.ArrayList<>(a.size() + b.size());
        all.addAll(a);
        all.addAll(b);
        all.sort(java.util.Comparator.comparingLong(RangeCursor.Range::offset));
        List<RangeCursor.Range> joined = new java.util.ArrayList<>();
        long from = -1;
        long end = -1;
        for (RangeCursor.Range r : all) {
            if (from >= 0 && r.offset() <= end) {
                end = Math.max(end, r.end());
                continue;
            }
            if (from >= 0) joined.add(new RangeCursor.Range(from, end - from));
            from = r.offset();
            end = r.end();
        }
        if (from >= 0) joined.add(new RangeCursor.Range(from, end - from));
        return joined.size() <= MAX_RANGES ? List.copyOf(joined) : null;
    }

    /** A cursor over a remembered delta from {@code from} on (a range straddling it starts there). */
    static RangeCursor cursor(Delta delta, long from) {
        return new RangeCursor() {
            private int next;

            @Override
            public Range next() {
                while (next < delta.ranges().size()) {
                    Range r = delta.ranges().get(next++);
                    if (r.end() <= from) continue;
                    return r.offset() >= from ? r : new Range(from, r.end() - from);
                }
                return null;
            }

            @Override
            public long capacityBytes() {
                return delta.sizeBytes();
            }

            @Override
            public Method method() {
                return Method.SHARED_EXTENTS;
            }

            @Override
            public void close() {
            }
        };
    }
}
