package io.csi4j.driver.replication;

import io.csi4j.driver.replication.ReplicaState.Role;
import io.csi4j.driver.replication.ReplicationRules.View;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Whether a handoff (ControllerPublishVolume on a node that is not the primary) may go on while nodes of the volume's set
 * do not answer (docs/replication.md, "A handoff past a node failed over from"). Pure. Before, any silent node sent the
 * publish to the failover's rule, which refuses (UNAVAILABLE) while an answering copy is primary: with three replicas, a
 * volume failed over from a lost A to B could not move on to C until A answered again or was forgotten.
 * <p>
 * It goes on in two cases, each proven from what the answering nodes say:
 * <ol>
 *   <li><b>A new handoff</b>: the primary P answering at the highest epoch T answered is <em>confirmed</em> (its agent
 *       has heard the controller without a gap of the failover delay since the act that made it primary, or since a
 *       tick where every node answered: {@link PrimaryConfirmations}) and P's durable failover note names every silent
 *       node as replaced ({@link FailoverNote}), or P was promoted by such a handoff past them, which carried the list
 *       ({@link ReplicaState#replaced}): T was made by failing over from them, or by a handoff from a primary for which
 *       this held while they were silent, so they held no epoch at or above T when it was made. The note proves that when T was
 *       made the silent node was not counted (the failover's own premise: it holds no epoch at or above T, and T's
 *       primary is P); the confirmation proves no epoch above T was made since: that needs P to step down (then P would
 *       know it) or a failover from P, which needs P silent to the controller for the delay, and P unconfirms before
 *       that. So the silent node holds no epoch above T and is not T's primary: the handoff's demotion of P to T+1
 *       before the target's promotion keeps one writable primary, as with every node answering. Either alone is not
 *       enough: a note without the confirmation passes a P that was itself away while the silent node was failed over
 *       to at T+1 with the third copy fenced (a fenced copy is not told a failover's epoch), and the confirmation is
 *       in-memory evidence the note narrows to the nodes a failover already gave up on.</li>
 *   <li><b>Completing a handoff in progress</b> towards the target: no copy is primary at T, an answering copy at T
 *       stepped down naming the target (a retry after a crash between the demotion and the promotion), and the target
 *       answers SECONDARY below T. T was made by that demotion (only a primary steps down, one successor per epoch); a
 *       promotion at T elsewhere would have needed a failover deciding on answers without T, with the target answering
 *       (only one node may be silent, and the stepped-down copy knew T), which tells every answering secondary T first
 *       (so the target would answer T), never a FENCED copy: hence a secondary below T; an epoch above T needs a
 *       primary at T to step down (none) or a failover, which would have told the stepped-down copy (it answers T) or
 *       promoted the target (it would answer it).</li>
 * </ol>
 * Anything else is {@link NotProven}: the failover's rule decides as before (UNAVAILABLE while a primary or a handoff
 * elsewhere answers; a failover when the silent node held the primary).
 */
public final class HandoffPastSilence {
    private HandoffPastSilence() {}

    public sealed interface Verdict {}

    /**
     * The handoff may go on from {@code from} at epoch {@code epoch} (the highest answered); {@code why} for the log;
     * {@code carried}: the silent nodes the target's promotion notes ({@link ReplicaState#replaced}) so the next handoff
     * may pass them too (a new handoff past them; none when every node answers or when completing a handoff in progress,
     * whose old primary's note the step-down cleared: the next handoff then waits for them, as before).
     */
    public record Proven(String from, long epoch, String why, List<String> carried) implements Verdict {
        public Proven {
            carried = List.copyOf(carried);
        }
    }

    /** Not shown safe: the failover's rule decides. */
    public record NotProven(String why) implements Verdict {}

    /**
     * @param target    the node being published to
     * @param views     every node asked, in the id's order (silent ones included; forgotten ones are not asked)
     * @param confirmed the answering nodes whose copy is a confirmed PRIMARY at the epoch it answered
     */
    public static Verdict check(String target, List<View> views, Set<String> confirmed) {
        List<String> silent = views.stream().filter(v -> !v.answered()).map(View::node).toList();
        if (silent.contains(target)) return new NotProven("node '" + target + "' does not answer");
        List<View> copies = views.stream().filter(v -> v.answered() && v.state().isPresent()).toList();
        long top = copies.stream().mapToLong(v -> v.state().get().epoch()).max().orElse(0);
        Optional<View> primary = copies.stream().filter(v -> v.state().get().epoch() == top && v.state().get().role() == Role.PRIMARY)
                .findFirst();
        if (primary.isPresent()) {
            String p = primary.get().node();
            if (p.equals(target)) return new NotProven("node '" + target + "' is the primary already");
            if (silent.isEmpty()) return new Proven(p, top, "every node answers", List.of());
            if (!confirmed.contains(p)) {
                return new NotProven("the primary on node '" + p + "' is unconfirmed: it may have been away while a silent node was"
                        + " failed over to");
            }
            ReplicaState ps = primary.get().state().get();
            // a failover's note, or the list a handoff past those nodes carried to this primary: the same knowledge
            List<String> replaced = Stream.concat(FailoverNote.replaced(ps.failover()).stream(),
                    FailoverNote.nodes(ps.replaced()).stream()).toList();
            List<String> unproven = silent.stream().filter(n -> !replaced.contains(n)).toList();
            if (!unproven.isEmpty()) {
                return new NotProven("epoch " + top + " was not made by a failover (or a handoff past one) from node(s) " + unproven
                        + ": they may hold a newer epoch");
            }
            return new Proven(p, top, "node(s) " + silent + " failed over from at or below epoch " + top + ", the primary confirmed"
                    + " since", silent);
        }
        Optional<View> handing = copies.stream().filter(v -> v.state().get().epoch() == top && v.state().get().role() == Role.SECONDARY
                && !v.state().get().successor().isEmpty()).findFirst();
        Optional<ReplicaState> to = copies.stream().filter(v -> v.node().equals(target)).findFirst().flatMap(View::state);
        if (handing.isPresent() && handing.get().state().get().successor().equals(target)) {
            // a secondary below T: a failover that made T elsewhere would have told it T; a FENCED copy it would not have
            if (to.isEmpty() || to.get().role() != Role.SECONDARY || to.get().epoch() >= top) {
                return new NotProven("node '" + target + "' is " + to.map(t -> t.role() + " at epoch " + t.epoch()).orElse("holding no copy")
                        + ": only a secondary below epoch " + top + " completes the handoff while a node is silent");
            }
            return new Proven(handing.get().node(), top, "completing the handoff from node '" + handing.get().node() + "' at epoch " + top,
                    List.of());
        }
        return new NotProven("no copy answers primary at epoch " + top);
    }
}
