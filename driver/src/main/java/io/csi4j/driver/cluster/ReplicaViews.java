package io.csi4j.driver.cluster;

import io.csi4j.driver.replication.ReplicaState;
import io.csi4j.driver.replication.ReplicationRules.View;
import io.csi4j.driver.replication.RoundLog;
import io.csi4j.proto.cluster.GetReplicaResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The wire's {@code GetReplicaResponse} as the replication rules read it ({@link View}): the one mapper between an
 * agent's answer and the domain's view of its copy, so routing, failover and CSI-Addons rank copies alike.
 */
final class ReplicaViews {
    private ReplicaViews() {}

    /** One view per node, in {@code nodes}' order (the id's); a node without an answer is silent. */
    static List<View> of(List<Agent> nodes, Map<Agent, GetReplicaResponse> answers) {
        List<View> views = new ArrayList<>();
        for (Agent node : nodes) {
            GetReplicaResponse r = answers.get(node);
            views.add(r == null ? View.silent(node.nodeId()) : of(node.nodeId(), r));
        }
        return views;
    }

    static View of(String node, GetReplicaResponse r) {
        return new View(node, true, state(r), round(r), pointCut(r));
    }

    private static Optional<ReplicaState> state(GetReplicaResponse r) {
        if (!r.getPresent()) return Optional.empty();
        return Optional.of(new ReplicaState(r.getEpoch(), ReplicaState.Role.valueOf(r.getRole()), r.getPoint(), r.getSuccessor(),
                r.getFailover(), r.getReplacedCarried()));
    }

    /**
     * When the point a copy holds was cut (review s10, F6): what its agent reports, or from an agent that does not, its
     * last round's cut; empty when neither is known.
     */
    private static Optional<Instant> pointCut(GetReplicaResponse r) {
        long nanos = r.getPointCutUnixNanos() != 0 ? r.getPointCutUnixNanos() : r.hasLastRound() ? r.getLastRound().getCutUnixNanos() : 0;
        return nanos == 0 ? Optional.empty() : Optional.of(instant(nanos));
    }

    private static Optional<RoundLog.Round> round(GetReplicaResponse r) {
        if (!r.hasLastRound()) return Optional.empty();
        var l = r.getLastRound();
        return Optional.of(new RoundLog.Round(instant(l.getCutUnixNanos()), instant(l.getCompletedUnixNanos()), l.getBytes(),
                Duration.ofNanos(l.getTookNanos())));
    }

    private static Instant instant(long unixNanos) {
        return Instant.ofEpochSecond(Math.floorDiv(unixNanos, 1_000_000_000L), Math.floorMod(unixNanos, 1_000_000_000L));
    }
}
