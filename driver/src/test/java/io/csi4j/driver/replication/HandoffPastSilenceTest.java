package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.csi4j.driver.replication.HandoffPastSilence.NotProven;
import io.csi4j.driver.replication.HandoffPastSilence.Proven;
import io.csi4j.driver.replication.ReplicaState.Role;
import io.csi4j.driver.replication.ReplicationRules.View;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * When a handoff may go on while nodes of the set are silent (issue 28, docs/replication.md "A handoff past a node
 * failed over from"). Before, any silent node sent the publish to the failover's rule, which refuses while a primary
 * answers: the first row waited for A for ever (or until {@code forget-node}). Nodes: a, b, c (d in four-replica rows).
 */
class HandoffPastSilenceTest {
    private static final Instant AT = Instant.parse("2026-11-28T00:00:00Z");

    private static View silent(String node) {
        return View.silent(node);
    }

    private static View copy(String node, long epoch, Role role, String successor, String failover) {
        return new View(node, true, Optional.of(new ReplicaState(epoch, role, "p-" + node, successor, failover)),
                Optional.empty(), Optional.empty());
    }

    private static View primary(String node, long epoch, String failover) {
        return copy(node, epoch, Role.PRIMARY, "", failover);
    }

    /** A primary promoted by a handoff past silent nodes, holding the list that handoff carried. */
    private static View handedPastSilence(String node, long epoch, String replaced) {
        return new View(node, true, Optional.of(new ReplicaState(epoch, Role.PRIMARY, "p-" + node, "", "", replaced)),
                Optional.empty(), Optional.empty());
    }

    private static View secondary(String node, long epoch) {
        return copy(node, epoch, Role.SECONDARY, "", "");
    }

    private static String failedOverFrom(String replaced) {
        return FailoverNote.of(AT, "pt-1", replaced);
    }

    /**
     * {@code from}: the node the handoff goes on from, or null when it is not proven (the failover's rule decides);
     * {@code carried}: the silent nodes the target's promotion notes.
     */
    private record Case(String name, List<View> views, Set<String> confirmed, String target, String from, long epoch,
            List<String> carried) {
        Case(String name, List<View> views, Set<String> confirmed, String target, String from, long epoch) {
            this(name, views, confirmed, target, from, epoch, List.of());
        }
    }

    @Test
    void aHandoffGoesOnPastASilentNodeOnlyWhenTheVolumeWasFailedOverFromItAndItsPrimaryStayedConfirmed() {
        var cases = List.of(
                new Case("the issue: A lost, failed over to B at 2 (C follows), the pod moves to C (main: UNAVAILABLE until A answers)",
                        List.of(silent("a"), primary("b", 2, failedOverFrom("a")), secondary("c", 2)), Set.of("b"), "c", "b", 2,
                        List.of("a")),
                new Case("C not yet following epoch 2: the same",
                        List.of(silent("a"), primary("b", 2, failedOverFrom("a")), secondary("c", 1)), Set.of("b"), "c", "b", 2,
                        List.of("a")),
                new Case("the failover replaced a forgotten node and A: both listed (only the silent A carried on)",
                        List.of(silent("a"), primary("b", 2, failedOverFrom("x, a")), secondary("c", 2)), Set.of("b"), "c", "b", 2,
                        List.of("a")),
                new Case("a second handoff: C promoted at 3 by the handoff past A carrying it, the pod moves back to B (before: waited for A)",
                        List.of(silent("a"), secondary("b", 3), handedPastSilence("c", 3, "a")), Set.of("c"), "b", "c", 3,
                        List.of("a")),
                new Case("a third: B promoted at 4 by the second, carrying A on, the pod moves to C again",
                        List.of(silent("a"), handedPastSilence("b", 4, "a"), secondary("c", 4)), Set.of("b"), "c", "b", 4,
                        List.of("a")),
                new Case("a carried list, C unconfirmed (it was away: A may have been failed over to since)",
                        List.of(silent("a"), secondary("b", 3), handedPastSilence("c", 3, "a")), Set.of(), "b", null, 0),
                new Case("a carried list naming another node, not the silent A",
                        List.of(silent("a"), secondary("b", 3), handedPastSilence("c", 3, "x")), Set.of("c"), "b", null, 0),
                new Case("four replicas, two silent, the carried list names one of them",
                        List.of(silent("a"), secondary("b", 3), handedPastSilence("c", 3, "a"), silent("d")), Set.of("c"), "b", null, 0),
                new Case("a copy above the carrying primary's epoch: superseded",
                        List.of(silent("a"), copy("b", 4, Role.FENCED, "", ""), handedPastSilence("c", 3, "a")), Set.of("c"), "b", null, 0),
                new Case("B unconfirmed (it was away: A may have been failed over to at 3 with C fenced, not told)",
                        List.of(silent("a"), primary("b", 2, failedOverFrom("a")), secondary("c", 2)), Set.of(), "c", null, 0),
                new Case("B made primary by a handoff: A a silent secondary, never failed over from (as main)",
                        List.of(silent("a"), primary("b", 2, ""), secondary("c", 2)), Set.of("b"), "c", null, 0),
                new Case("B's failover replaced C, not the silent A",
                        List.of(silent("a"), primary("b", 2, failedOverFrom("c")), secondary("c", 2)), Set.of("b"), "c", null, 0),
                new Case("the silent A may be the primary: no copy answers primary (the failover's rule decides)",
                        List.of(silent("a"), secondary("b", 1), secondary("c", 1)), Set.of(), "c", null, 0),
                new Case("a copy knows an epoch above the primary's: the primary is superseded",
                        List.of(silent("a"), primary("b", 2, failedOverFrom("a")), copy("c", 3, Role.FENCED, "", "")),
                        Set.of("b"), "c", null, 0),
                new Case("the target itself does not answer",
                        List.of(primary("a", 2, failedOverFrom("c")), secondary("b", 2), silent("c")), Set.of("a"), "c", null, 0),
                new Case("published on the primary: nothing to hand over (the failover's rule passes it)",
                        List.of(silent("a"), primary("b", 2, failedOverFrom("a")), secondary("c", 2)), Set.of("b"), "b", null, 0),
                new Case("four replicas, two silent, the failover replaced one of them",
                        List.of(silent("a"), primary("b", 2, failedOverFrom("a")), secondary("c", 2), silent("d")),
                        Set.of("b"), "c", null, 0),
                new Case("a handoff B -> C in progress (B stepped down to 3 naming C, a crash before C's promotion): completed",
                        List.of(silent("a"), copy("b", 3, Role.SECONDARY, "c", ""), secondary("c", 2)), Set.of(), "c", "b", 3),
                new Case("a handoff in progress towards a FENCED C: a failover to A at 3 (B silent) would not have told C",
                        List.of(silent("a"), copy("b", 3, Role.SECONDARY, "c", ""), copy("c", 2, Role.FENCED, "", "")),
                        Set.of(), "c", null, 0),
                new Case("a handoff in progress towards C, which knows epoch 3 already (told by a failover elsewhere)",
                        List.of(silent("a"), copy("b", 3, Role.SECONDARY, "c", ""), secondary("c", 3)), Set.of(), "c", null, 0),
                new Case("a handoff in progress towards C: a publish on another node waits",
                        List.of(silent("a"), copy("b", 3, Role.SECONDARY, "c", ""), secondary("c", 2), secondary("d", 2)),
                        Set.of(), "d", null, 0),
                new Case("every node answers: as main",
                        List.of(secondary("a", 2), primary("b", 2, ""), secondary("c", 2)), Set.of(), "c", "b", 2));
        List<String> failures = new ArrayList<>();
        for (var c : cases) {
            var verdict = HandoffPastSilence.check(c.target(), c.views(), c.confirmed());
            boolean ok = c.from() == null ? verdict instanceof NotProven
                    : verdict instanceof Proven p && p.from().equals(c.from()) && p.epoch() == c.epoch() && p.carried().equals(c.carried());
            if (!ok) failures.add(c.name() + ": " + verdict);
        }
        assertEquals(List.of(), failures);
    }

    @Test
    void theFailoverNoteNamesTheNodesItReplaced() {
        assertEquals(List.of("node-a"), FailoverNote.replaced(failedOverFrom("node-a")));
        assertEquals(List.of("x", "node-a"), FailoverNote.replaced(failedOverFrom("x, node-a")));
        // what an agent before FailoverNote wrote (Rounds.failover)
        assertEquals(List.of("node-a"), FailoverNote.replaced("failed over at 2026-11-28T03:00:00Z from point csi4j-point-v-b-1,"
                + " replacing node 'node-a'"));
        assertEquals(List.of(), FailoverNote.replaced(""));
        assertEquals(List.of("x", "node-a"), FailoverNote.nodes(FailoverNote.joined(List.of("x", "node-a"))));
        assertEquals(List.of(), FailoverNote.nodes(""));   // a state an older agent wrote, or nothing carried
        assertEquals(List.of(), FailoverNote.replaced("secondary on node 'b' is 2 intervals behind, replacing node 'a'"));
        assertInstanceOf(NotProven.class, HandoffPastSilence.check("c", List.of(silent("a"),
                primary("b", 2, "failed over at T from point p, replacing node ''"), secondary("c", 2)), Set.of("b")));
    }
}
