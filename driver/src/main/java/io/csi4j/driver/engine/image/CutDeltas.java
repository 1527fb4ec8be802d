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
 * <p>Sound as {@link SharedExtentDelta} is (shared blocks are never written in place): the new point is a reflink of
 * the base with exactly these ranges cloned from the image, everywhere else the base's blocks, so it differs from the
 * base nowhere else. It also needs both points unchanged while remembered, which the id rule gives (a point's file is
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
