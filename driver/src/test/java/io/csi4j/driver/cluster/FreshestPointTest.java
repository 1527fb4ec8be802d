package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.driver.replication.FailoverTarget;
import io.csi4j.driver.replication.ReplicaState;
import io.csi4j.driver.replication.ReplicaState.Role;
import io.csi4j.driver.replication.ReplicationRules;
import io.csi4j.driver.replication.ReplicationRules.Failover;
import io.csi4j.driver.replication.ReplicationRules.View;
import io.csi4j.driver.replication.RoundLog;
import io.csi4j.proto.cluster.GetReplicaResponse;
import io.csi4j.proto.cluster.LastRound;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Review 2026-11-27 s10, F6: both failover rankings (ControllerUnpublishVolume from a lost primary:
 * {@code FailoverTarget.newest} over the agents' answers as {@code ReplicaViews} reads them; CSI-Addons Promote(force):
 * {@code ReplicationRules}) pick the copy whose point was cut
 * last, a handoff's final point on the old primary (no round of it) included; an agent that does not report the
 * point's cut is ranked by its last round's, as before. Three replicas after a handoff a -> b at epoch 2, b lost: a holds
 * the final point, c a point from a's last round to it before the move.
 */
class FreshestPointTest {
    private static final Instant T0 = Instant.parse("2026-11-27T01:00:00Z");

    /** A secondary at epoch 2: its point, its point's cut as its agent reports it (null: not reported), its last round's cut. */
    private record Copy(String node, String point, String successor, Instant pointCut, Instant roundCut) {
        GetReplicaResponse wire() {
            var b = GetReplicaResponse.newBuilder().setPresent(true).setEpoch(2).setRole("SECONDARY").setPoint(point).setSuccessor(successor);
            if (pointCut != null) b.setPointCutUnixNanos(nanos(pointCut));
            if (roundCut != null) b.setLastRound(LastRound.newBuilder().setCutUnixNanos(nanos(roundCut)).setCompletedUnixNanos(nanos(roundCut) + 1));
            return b.build();
        }

        View view() {
            var round = Optional.ofNullable(roundCut).map(c -> new RoundLog.Round(c, c.plusSeconds(1), 4096, Duration.ofSeconds(1)));
            var state = Optional.of(new ReplicaState(2, Role.SECONDARY, point, successor));
            return pointCut == null ? new View(node, true, state, round) : new View(node, true, state, round, Optional.of(pointCut));
        }
    }

    private record Case(String name, List<Copy> copies, String expected) {}

    @Test
    void theCopyWhosePointWasCutLastIsFailedOverTo() {
        var aFinal = new Copy("a", "p-final", "b", T0.plusSeconds(60), null);           // cut the handoff's final point itself
        var cBefore = new Copy("c", "p-c", "", T0.plusSeconds(30), T0.plusSeconds(30));  // its last round from a, before the move
        var cAfter = new Copy("c", "p-c2", "", T0.plusSeconds(90), T0.plusSeconds(90));  // a round from b after the move
        var aOld = new Copy("a", "p-final", "b", null, null);                            // an older agent: says nothing of it
        var cOld = new Copy("c", "p-c", "", null, T0.plusSeconds(30));
        var aTie = new Copy("a", "p-final", "b", T0.plusSeconds(30), null);
        var cases = List.of(
                new Case("the old primary's final point is newer than c's round (fails before F6's fix: c)", List.of(aFinal, cBefore), "a"),
                new Case("the same, c listed first", List.of(cBefore, aFinal), "a"),
                new Case("c had a round from the new primary after the move: c", List.of(aFinal, cAfter), "c"),
                new Case("older agents: by the last round, a copy without one oldest", List.of(aOld, cOld), "c"),
                new Case("a tie: the first in the id's order", List.of(aTie, cBefore), "a"));
        for (Case c : cases) {
            var wire = new java.util.ArrayList<View>(List.of(View.silent("b")));  // b, the lost primary, does not answer
            c.copies().forEach(copy -> wire.add(ReplicaViews.of(copy.node(), copy.wire())));
            assertEquals(Optional.of(c.expected()), FailoverTarget.newest(wire).map(View::node), "ControllerUnpublishVolume: " + c.name());
            var views = new java.util.ArrayList<View>(List.of(View.silent("b")));
            c.copies().forEach(copy -> views.add(copy.view()));
            assertEquals(new Failover(c.expected()), ReplicationRules.promote("v", views, List.of(), true), "Promote(force): " + c.name());
        }
    }

    private static long nanos(Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }
}
