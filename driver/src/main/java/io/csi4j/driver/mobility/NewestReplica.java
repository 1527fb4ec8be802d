package io.csi4j.driver.mobility;

import io.csi4j.driver.engine.Replica;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Which of the replicas a node holds of one volume is the newest point, the base of a resync by checksums (the fewest
 * chunks differ from the primary's point). Nothing in a replica's id orders it: a point's snapshot id is
 * {@code snap-<16 random>-<node tag of the primary that cut it>}, and the name it was cut under
 * ({@code csi4j-point-<volume>-<secondary>-<n>}, {@code n} that primary's {@code System.nanoTime()}) is not on this
 * node and would not order points of two primaries anyway. What does order them is when this node kept each one: a
 * replica is written once, as the round that received its point commits (or as a handoff keeps its final point), and
 * each round's point is newer than the last. Two replicas of a volume are there only after a crash between keeping
 * the new one and dropping the old one (docs/power-cut.md, finding 5); either is a correct base, the newer one smaller.
 * Pure, so the rule is a table test.
 */
final class NewestReplica {
    private NewestReplica() {}

    /** A replica and when this node kept it (its file's last data change, {@code DataMover.keptAt}). */
    record Kept(Replica replica, Instant keptAt) {}

    /** The replica kept last; of two kept at the same instant the greater snapshot id, so the answer is stable. Empty for none. */
    static Optional<Replica> of(List<Kept> held) {
        return held.stream()
                .max(Comparator.comparing(Kept::keptAt).thenComparing(k -> k.replica().snapshotId()))
                .map(Kept::replica);
    }
}
