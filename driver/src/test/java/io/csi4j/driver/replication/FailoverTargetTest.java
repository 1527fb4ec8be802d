package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.driver.replication.FailoverTarget.Fits;
import io.csi4j.driver.replication.FailoverTarget.NotACandidate;
import io.csi4j.driver.replication.FailoverTarget.Older;
import io.csi4j.driver.replication.FailoverTarget.Verdict;
import io.csi4j.driver.replication.ReplicaState.Role;
import io.csi4j.driver.replication.ReplicationRules.Failover;
import io.csi4j.driver.replication.ReplicationRules.View;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A failover never promotes a copy older than another answering copy's point, whichever epoch either follows (issue
 * 28). Before, CSI-Addons Promote(force) ranked only the secondaries of the highest epoch, and a ControllerPublishVolume
 * failing over to its own node ranked nothing: a secondary below the highest epoch was promoted while a copy that
 * follows it (told by {@code FollowReplica}, or the old primary of a handoff holding the final point) held a newer
 * point, or the reverse. Four copies at most: "x", the lost primary, silent; a, b, c answer.
 */
class FailoverTargetTest {
    private static final Instant T0 = Instant.parse("2026-11-28T00:00:00Z");

    private static View copy(String node, long epoch, Role role, String point, String successor, Integer cutSecond) {
        var state = Optional.of(new ReplicaState(epoch, role, point, successor));
        return new View(node, true, state, Optional.empty(), Optional.ofNullable(cutSecond).map(T0::plusSeconds));
    }

    private static View secondary(String node, long epoch, Integer cutSecond) {
        return copy(node, epoch, Role.SECONDARY, "p-" + node, "", cutSecond);
    }

    private static Older older(String node, Integer cut, String fresher, int fresherCut) {
        return new Older(node, Optional.ofNullable(cut).map(T0::plusSeconds), fresher, T0.plusSeconds(fresherCut));
    }

    /** {@code views} after the silent "x"; the newest candidate (null: none); what a failover to each named node is. */
    private record Case(String name, List<View> views, String newest, Map<String, Verdict> verdicts) {}

    @Test
    void aFailoverNeverPicksACopyOlderThanAnotherAnsweringCopysPoint() {
        var cases = List.of(
                new Case("a below the highest epoch, b told epoch 2 by FollowReplica holding a newer point (main: a published over b)",
                        List.of(secondary("a", 1, 10), secondary("b", 2, 20)), "b",
                        Map.of("a", older("a", 10, "b", 20), "b", new Fits("b"))),
                new Case("the reverse: the copy below the highest epoch is newer (main's Promote(force): b)",
                        List.of(secondary("a", 1, 20), secondary("b", 2, 10)), "a",
                        Map.of("a", new Fits("a"), "b", older("b", 10, "a", 20))),
                new Case("the old primary of a handoff holds the final point at epoch 2, c a point of epoch 1",
                        List.of(copy("a", 2, Role.SECONDARY, "p-final", "x", 30), secondary("c", 1, 20)), "a",
                        Map.of("a", new Fits("a"), "c", older("c", 20, "a", 30))),
                new Case("a tie: either fits, the first in the id's order is the newest",
                        List.of(secondary("a", 1, 10), secondary("b", 2, 10)), "a",
                        Map.of("a", new Fits("a"), "b", new Fits("b"))),
                new Case("an unknown cut ranks oldest, wherever it is listed",
                        List.of(secondary("a", 2, null), secondary("b", 1, 5)), "b",
                        Map.of("a", older("a", null, "b", 5), "b", new Fits("b"))),
                new Case("every cut unknown: a tie, the first",
                        List.of(secondary("a", 1, null), secondary("b", 2, null)), "a",
                        Map.of("a", new Fits("a"), "b", new Fits("b"))),
                new Case("three candidates: only the newest fits",
                        List.of(secondary("a", 1, 10), secondary("b", 2, 30), secondary("c", 2, 20)), "b",
                        Map.of("a", older("a", 10, "b", 30), "b", new Fits("b"), "c", older("c", 20, "b", 30))),
                new Case("a fenced copy and a superseded primary are neither candidates nor compared against",
                        List.of(copy("a", 1, Role.FENCED, "p-a", "", 50), copy("b", 1, Role.PRIMARY, "p-b", "", 60), secondary("c", 2, 10)), "c",
                        Map.of("a", new NotACandidate("a", "FENCED"), "b", new NotACandidate("b", "PRIMARY"), "c", new Fits("c"))),
                new Case("a secondary holding no point yet is no candidate, and a copy-less node neither",
                        List.of(copy("a", 2, Role.SECONDARY, "", "", null), new View("b", true, Optional.empty(), Optional.empty()), secondary("c", 1, 10)), "c",
                        Map.of("a", new NotACandidate("a", "SECONDARY holding no complete point"), "b", new NotACandidate("b", "holding no copy"),
                                "c", new Fits("c"))),
                new Case("no candidate at all", List.of(copy("a", 2, Role.SECONDARY, "", "", null)), null,
                        Map.of("a", new NotACandidate("a", "SECONDARY holding no complete point"))));
        for (Case c : cases) {
            var views = new ArrayList<View>(List.of(View.silent("x")));
            views.addAll(c.views());
            assertEquals(Optional.ofNullable(c.newest()), FailoverTarget.newest(views).map(View::node), "newest: " + c.name());
            c.verdicts().forEach((node, verdict) -> assertEquals(verdict, FailoverTarget.check(node, views), node + ": " + c.name()));
            if (c.newest() != null) {
                assertEquals(new Failover(c.newest()), ReplicationRules.promote("v", views, List.of(), true), "Promote(force): " + c.name());
            }
        }
        assertEquals(new NotACandidate("x", "not answering"), FailoverTarget.check("x", List.of(View.silent("x"), secondary("a", 1, 1))));
    }
}
