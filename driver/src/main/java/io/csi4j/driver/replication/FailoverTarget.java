package io.csi4j.driver.replication;

import io.csi4j.driver.replication.ReplicaState.Role;
import io.csi4j.driver.replication.ReplicationRules.View;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Which copy a failover may promote (docs/replication.md, "Which copy a failover picks"). Pure. A <em>candidate</em> is
 * an answering copy that is a {@code SECONDARY} holding a complete point, whatever epoch it knows: one below the highest
 * epoch (not told of a reservation, or the other copies after a handoff) and one at it (told by {@code FollowReplica},
 * or an old primary that handed over, holding the final point) are ranked alike, by when the point they hold was cut
 * ({@link View#pointCutAt}); a cut not known ranks oldest. A failover never promotes a copy whose point is older than
 * another candidate's: that would lose the writes the newer one holds, while it answers. A tie is no loss. PRIMARY and
 * FENCED copies are neither candidates nor compared against (a fenced copy's image is not a point; a primary at the
 * highest epoch stops any failover before this rule, and one below it is fenced); their agents refuse a promotion too.
 */
public final class FailoverTarget {
    private FailoverTarget() {}

    /** What a failover to one named copy would be. */
    public sealed interface Verdict {}

    /** It may be promoted: no other candidate holds a newer point. */
    public record Fits(String node) implements Verdict {}

    /** It holds no complete point, or is not a secondary: nothing to fail over to. */
    public record NotACandidate(String node, String why) implements Verdict {}

    /** {@code fresher} holds a newer point (cut at {@code fresherCut}) than {@code node} (cut at {@code cut}, or unknown). */
    public record Older(String node, Optional<Instant> cut, String fresher, Instant fresherCut) implements Verdict {}

    /** The candidate holding the newest point; on a tie the first in {@code views}' order (the id's). */
    public static Optional<View> newest(List<View> views) {
        View best = null;
        for (View v : views) {
            if (candidate(v) && (best == null || newer(v, best))) best = v;
        }
        return Optional.ofNullable(best);
    }

    /** Whether a failover to {@code node} keeps every point an answering candidate holds. */
    public static Verdict check(String node, List<View> views) {
        var target = views.stream().filter(v -> v.node().equals(node)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no view of node '" + node + "'"));
        if (!candidate(target)) {
            String why = target.state().map(s -> s.role() != Role.SECONDARY ? s.role().name() : s.role().name() + " holding no complete point")
                    .orElse(target.answered() ? "holding no copy" : "not answering");
            return new NotACandidate(node, why);
        }
        var best = newest(views).orElseThrow();
        if (newer(best, target)) return new Older(node, target.pointCutAt(), best.node(), best.pointCutAt().orElseThrow());
        return new Fits(node);
    }

    private static boolean candidate(View v) {
        return v.state().filter(s -> s.role() == Role.SECONDARY && !s.point().isEmpty()).isPresent();
    }

    /** Strictly newer: a known cut beats an unknown one, a later cut an earlier one. */
    private static boolean newer(View a, View b) {
        if (a.pointCutAt().isEmpty()) return false;
        return b.pointCutAt().isEmpty() || a.pointCutAt().get().isAfter(b.pointCutAt().get());
    }
}
