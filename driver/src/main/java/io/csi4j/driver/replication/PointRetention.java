package io.csi4j.driver.replication;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Which of the primary's points (internal cuts, oldest first) a round may drop, and which base a secondary pulls
 * against. The rule that makes a returning secondary resync by a delta: **every point some secondary holds is kept**,
 * however long that secondary has been away, and so is the newest (the next round's base for everyone). A secondary
 * pulls a full copy only when it holds no point at all, or one the primary does not have (a point from before a
 * failover, of another primary's line).
 */
public final class PointRetention {
    private PointRetention() {}

    /** The points that no secondary holds and that are not the newest, in the order given. */
    public static List<String> droppable(List<String> pointsOldestFirst, Collection<String> heldBySecondaries) {
        var drop = new ArrayList<String>();
        for (int i = 0; i < pointsOldestFirst.size() - 1; i++) {
            String p = pointsOldestFirst.get(i);
            if (!heldBySecondaries.contains(p)) drop.add(p);
        }
        return drop;
    }

    /** The base of a secondary's next pull: the point it holds if the primary still has it; empty means a full copy. */
    public static Optional<String> base(List<String> primaryPoints, String heldBySecondary) {
        return heldBySecondary.isEmpty() || !primaryPoints.contains(heldBySecondary)
                ? Optional.empty() : Optional.of(heldBySecondary);
    }
}
