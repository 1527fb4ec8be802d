package io.csi4j.driver.cluster;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.replication.FailoverNote;
import io.csi4j.driver.replication.FailoverTarget;
import io.csi4j.driver.replication.HandoffPastSilence;
import io.csi4j.proto.cluster.DemoteReplicaRequest;
import io.csi4j.proto.cluster.FailoverReplicaRequest;
import io.csi4j.proto.cluster.GetReplicaResponse;
import io.csi4j.proto.cluster.PeerAgent;
import io.csi4j.proto.cluster.SyncReplicaRequest;
import io.csi4j.sdk.CsiException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Logger;

/**
 * The controller's decisions that move a replicated volume's primary (docs/replication.md, "Handoff at attach",
 * "Failover (as built)", "Unpublish from a silent primary"): the handoff before ControllerPublishVolume, the failover
 * from a silent or forgotten primary (with its reservation of the epoch on the other copies), and the failover an
 * unpublish from the lost primary starts. Finding the current primary is {@link Replicas}' routing; which copy a
 * failover may promote is {@link FailoverTarget}'s rule. Stateless: the agents' durable states are the truth.
 */
final class PrimaryMoves {
    private static final Logger LOG = Logger.getLogger(PrimaryMoves.class.getName());

    private final Agents agents;
    private final Replicas replicas;
    private final Duration failoverAfter;

    PrimaryMoves(Agents agents, Replicas replicas, Duration failoverAfter) {
        this.agents = agents;
        this.replicas = replicas;
        this.failoverAfter = failoverAfter;
    }

    /**
     * The agent a ControllerUnpublishVolume of a replicated volume from {@code nodeId} goes to (docs/replication.md,
     * "Unpublish from a silent primary"): its primary, as for every call. When that primary is the one node not
     * answering, or was on a forgotten node (silent for ever), and it is the node being unpublished (or all nodes are),
     * the volume fails over first ({@link #failoverTo}: UNAVAILABLE until a silent node has been silent for {@code
     * --failover-after}) to the answering copy holding the newest complete point, and the call goes there (it holds no
     * publication to the lost node: OK).
     * Kubernetes attaches a volume to another node only after its detach from the old one succeeded, and force-detaches
     * from a node it gave up on: without this, a lost primary's node would keep its volume from ever moving.
     */
    Agent unpublishing(ReplicatedVolumeId id, String nodeId) {
        var asked = ReplicaAnswers.ask(agents, id);
        List<String> lost = lost(asked);
        boolean fromTheLostOne = asked.silent().size() <= 1 && !lost.isEmpty() && (nodeId.isEmpty() || lost.contains(nodeId));
        // a handoff towards the lost node is no reason to wait: it is failed over from like a lost primary (review s10, F2)
        if (!fromTheLostOne || asked.tombstoned() || asked.primary().isPresent()
                || asked.handingOver().filter(to -> !lost.contains(to)).isPresent()) {
            return replicas.primaryFrom(asked);   // asked strictly: every tag is a known node
        }
        Agent target = FailoverTarget.newest(asked.views()).map(v -> asked.agent(v.node()))
                .orElseThrow(() -> CsiException.unavailable("volume " + id + ": primary node '"
                        + String.join(", ", lost) + "' is lost and no other copy holds a complete point to fail over to"));
        failoverTo(asked, target);
        return target;
    }

    /**
     * Makes {@code target} the primary before ControllerPublishVolume is sent to it (docs/replication.md, "Handoff at
     * attach"): nothing when it is the primary already; else the primary steps down to a secondary of epoch E+1
     * naming the target (FAILED_PRECONDITION while still published or staged: nothing changes), cuts a final point,
     * the target pulls it and becomes primary at E+1. A retry after a crash finds the old primary handed over and
     * completes the pull. A node that does not answer: the handoff goes on only past nodes the volume was failed over
     * from while its primary stayed confirmed, or to complete a handoff in progress ({@link HandoffPastSilence}), and
     * the target's promotion then carries the silent nodes so its own next handoff may pass them too; else, or no
     * primary because it was on a forgotten node: {@link #failoverTo}.
     */
    void handoffTo(ReplicatedVolumeId id, Agent target) {
        var asked = ReplicaAnswers.ask(agents, id);
        Replicas.refuseDeleted(asked);
        List<String> carried = List.of();
        if (!asked.silent().isEmpty()) {
            switch (HandoffPastSilence.check(target.nodeId(), asked.views(), asked.confirmedPrimaries())) {
                case HandoffPastSilence.NotProven no -> {
                    failoverTo(asked, target);
                    return;
                }
                case HandoffPastSilence.Proven yes -> {
                    LOG.info(() -> "volume " + id + ": handoff to node '" + target.nodeId() + "' while "
                            + asked.silent().stream().map(Agent::nodeId).toList() + " do not answer: " + yes.why());
                    carried = yes.carried();
                }
            }
        }
        Map<Agent, GetReplicaResponse> states = asked.answers();
        replicas.fenceSuperseded(asked);
        List<String> forgotten = asked.forgotten();
        if (asked.primary().isEmpty() && asked.handingOver().filter(to -> !forgotten.contains(to)).isEmpty() && !forgotten.isEmpty()) {
            // its primary (or the successor of its handoff) was on a node forgotten since: silent for ever
            failoverTo(asked, target);
            return;
        }
        if (!states.get(target).getPresent()) throw CsiException.notFound("volume " + id + " has no replica on node '" + target.nodeId() + "'");
        long top = asked.top();
        var primary = asked.primary();
        if (primary.isPresent() && primary.get() == target) return;
        Agent old;
        long epoch;
        if (primary.isPresent()) {
            old = primary.get();
            epoch = top + 1;
            old.call(a -> a.nodeAgent().demoteReplica(DemoteReplicaRequest.newBuilder().setVolumeId(id.toString())
                    .setEpoch(epoch).setSuccessorNodeId(target.nodeId()).build()));
        } else {
            // no primary at the highest epoch: a handoff in progress, finished only towards the node it names
            epoch = top;
            old = states.entrySet().stream().filter(e -> e.getValue().getEpoch() == top && !e.getValue().getSuccessor().isEmpty())
                    .map(Map.Entry::getKey).findFirst().orElseThrow(() -> CsiException.unavailable("volume " + id
                            + " has no primary at epoch " + top + " and no handoff in progress"));
            String successor = states.get(old).getSuccessor();
            if (!successor.equals(target.nodeId())) {
                throw CsiException.failedPrecondition("volume " + id + " is being handed over to node '" + successor
                        + "', not to '" + target.nodeId() + "'; publish it there first");
            }
        }
        String replaced = FailoverNote.joined(carried);     // the silent nodes the promoted copy notes: the next handoff passes them
        var from = PeerAgent.newBuilder().setNodeId(old.nodeId()).setAddress(old.address()).setAuthority(old.authority()).build();
        var pulled = target.call(a -> a.nodeAgent().syncReplica(SyncReplicaRequest.newBuilder().setVolumeId(id.toString())
                .setPrimary(from).setPromoteEpoch(epoch).setReplacedNodeIds(replaced).build()));
        LOG.info(() -> "volume " + id + " handed over from node '" + old.nodeId() + "' to '" + target.nodeId() + "' at epoch "
                + epoch + ": " + pulled.getBytesReceived() + " bytes since the last point");
    }

    /**
     * The primary's node does not answer (docs/replication.md, "Failover"): exactly one node of the set is silent,
     * every other one answers, none of them is primary at the highest epoch they know, and none is handing over.
     * Until the silent node has said nothing for {@code --failover-after} (counted from its last answer, {@link
     * Liveness#silentFor}): UNAVAILABLE, and the CO retries. A target that is no secondary holding a point, or whose
     * point is older than another answering copy's whatever epoch it knows ({@link FailoverTarget}), is then
     * FAILED_PRECONDITION (the latter naming the fresher node), before any copy learns an epoch. Then the target's
     * latest complete point becomes the primary at an epoch above every epoch the answering nodes know, and its
     * condition says so. A node the id names
     * that was forgotten ({@code csi4j cluster forget-node}) is lost as a node silent for ever is: with no node silent,
     * it is the one failed over from, at once (review s9, F2); it never counts against "exactly one silent" (it answered
     * holding nothing, as forget-node counts it everywhere else: its agent is refused for good). The condition names the
     * lost nodes, forgotten first.
     */
    void failoverTo(ReplicaAnswers asked, Agent target) {
        var id = asked.id();
        Map<Agent, GetReplicaResponse> states = asked.answers();
        List<Agent> silent = asked.silent();
        List<String> lost = lost(asked);
        if (silent.size() > 1 || silent.contains(target) || lost.isEmpty()) {
            throw CsiException.unavailable("volume " + id + ": nodes not answering: "
                    + String.join(", ", silent.stream().map(Agent::nodeId).toList()) + "; a failover needs every other node of its set");
        }
        String gone = String.join(", ", lost);
        if (!states.get(target).getPresent()) throw CsiException.notFound("volume " + id + " has no replica on node '" + target.nodeId() + "'");
        long top = asked.top();
        var primary = asked.primary();
        if (primary.isPresent() && primary.get() == target) return;           // a retried failover, done
        // a handoff to the lost node itself is no reason to wait: it is failed over from like a lost primary (review s10, F2)
        if (primary.isPresent() || states.values().stream().anyMatch(s -> s.getEpoch() == top && !s.getSuccessor().isEmpty()
                && !lost.contains(s.getSuccessor()))) {
            throw CsiException.unavailable("volume " + id + ": node '" + gone + "' does not answer while its primary"
                    + " or handoff is elsewhere; publish again when it answers");
        }
        for (Agent quiet : silent) {
            var silence = agents.liveness().silentFor(quiet.nodeId()).orElse(Duration.ZERO);
            if (silence.compareTo(failoverAfter) < 0) {
                throw CsiException.unavailable("volume " + id + ": primary node '" + quiet.nodeId() + "' silent for "
                        + silence.toSeconds() + "s; failover after " + failoverAfter.toSeconds() + "s");
            }
        }
        long epoch = top + 1;
        // before any reservation: a copy its agent would refuse, or one older than another answering copy's point
        switch (FailoverTarget.check(target.nodeId(), asked.views())) {
            case FailoverTarget.Fits fits -> { }
            case FailoverTarget.NotACandidate no -> throw CsiException.failedPrecondition("volume " + id + ": the copy on node '"
                    + target.nodeId() + "' is " + no.why() + ": nothing to fail over to");
            case FailoverTarget.Older older -> throw CsiException.failedPrecondition("volume " + id + ": the copy on node '"
                    + target.nodeId() + "' holds a point cut " + older.cut().map(Object::toString).orElse("at an unknown time")
                    + ", older than the one on node '" + older.fresher() + "' (cut " + older.fresherCut() + "): a failover to '"
                    + target.nodeId() + "' would lose the writes between; publish it on '" + older.fresher() + "', whose failover keeps them");
        }
        List<Agent> reserved = reserve(id, epoch, target, states);
        var done = target.call(a -> a.nodeAgent().failoverReplica(FailoverReplicaRequest.newBuilder().setVolumeId(id.toString())
                .setEpoch(epoch).setReplacedNodeId(gone).build()));
        // they follow the new primary already, so the scheduler's follow (and the round it starts at once) passes them by
        Replicas.firstRound(id, target, reserved);
        LOG.warning(() -> "volume " + id + " failed over to node '" + target.nodeId() + "' at epoch " + epoch + ": " + done.getCondition());
    }

    /**
     * Before a failover to {@code epoch}: every other answering secondary below it learns the epoch as a secondary
     * ({@code FollowReplica}, durable on its node, its point kept), so no other decider can fail over to it at that
     * epoch too: a node that knows an epoch is never promoted to it. Two controller replicas (the attacher's and the
     * csi-addons sidecar's leaders may differ) each choosing another target at the same epoch: each makes the other's
     * target learn it before promoting its own, so at most one promotion succeeds, the other is refused and retried at
     * the next epoch (review 2026-11-27 s10, F3). A copy that is not a secondary is never a failover target. Returns
     * the copies told, each of which gets a round from the new primary at once once it is promoted.
     */
    private static List<Agent> reserve(ReplicatedVolumeId id, long epoch, Agent target, Map<Agent, GetReplicaResponse> states) {
        List<Agent> followed = new ArrayList<>();
        states.forEach((node, s) -> {
            if (node == target || !s.getPresent() || !s.getRole().equals("SECONDARY") || s.getEpoch() >= epoch) return;
            node.call(a -> a.nodeAgent().followReplica(io.csi4j.proto.cluster.FollowReplicaRequest.newBuilder()
                    .setVolumeId(id.toString()).setEpoch(epoch).build()));
            followed.add(node);
        });
        return followed;
    }

    /** The nodes a failover may replace: the id's forgotten nodes (silent for ever), then the silent ones. */
    private static List<String> lost(ReplicaAnswers asked) {
        List<String> lost = new ArrayList<>(asked.forgotten());
        asked.silent().forEach(n -> lost.add(n.nodeId()));
        return lost;
    }
}
