package io.csi4j.driver.cluster;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.proto.cluster.ForgetNodeRequest;
import io.csi4j.proto.cluster.ListReplicasRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * {@code csi4j cluster forget-node} on the controller (docs/replication.md, "A node lost for good"): asks the agents
 * what {@link LostNodes}' rules need, and has them record the mark. The controller only caches the marks
 * ({@link Agents#forgotten()}): a restarted one reads them back from the agents before it serves.
 */
final class NodeForgetting {
    /** Each agent's wait for its listing and for recording the mark (all agents at once). */
    private static final Duration ASK = Duration.ofSeconds(9);

    /** Forgotten at {@code at} (the first time, for a node forgotten before), recorded by these nodes (sorted). */
    record Forgotten(List<String> recordedBy, Instant at) {}

    private final Agents agents;
    private final Duration failoverAfter;

    NodeForgetting(Agents agents, Duration failoverAfter) {
        this.agents = agents;
        this.failoverAfter = failoverAfter;
    }

    /**
     * Declares {@code nodeId} permanently lost. The first time, refused (a {@link DomainException} from {@link LostNodes})
     * while it may not be forgotten ({@link LostNodes#checkForgettable}: an agent of it answers or was silent for less than
     * {@code failoverAfter}, or an address never answered) and while it may hold the primary of a live volume as the
     * answering agents list their copies ({@link LostNodes#withoutPrimary}, with {@code acceptPossibleLoss}); a node
     * already forgotten is not checked again and keeps its first time. Then every other answering agent records the
     * mark durably before this returns (the silent ones are told by the scheduler when they answer), and the controller
     * caches it; UNAVAILABLE, nothing recorded, when none of them did.
     */
    Forgotten forget(String nodeId, boolean acceptPossibleLoss) {
        var known = agents.forgotten();
        boolean first = !known.containsKey(nodeId);
        if (first) {
            LostNodes.checkForgettable(nodeId, agents.all().stream().filter(a -> a.nodeId() != null)
                    .map(a -> new LostNodes.Seen(a.nodeId(), a.address(), a.answering(), a.silentFor())).toList(),
                    agents.unidentified().stream().map(Agent::address).toList(), failoverAfter);
        }
        Instant at = known.getOrDefault(nodeId, Instant.ofEpochSecond(Instant.now().getEpochSecond()));
        List<Agent> others = agents.nodes().stream().filter(a -> a.answering() && !nodeId.equals(a.nodeId())).toList();
        if (first) checkNoPrimaryThere(nodeId, others, acceptPossibleLoss);
        List<String> recorded = recordOn(others, nodeId, at);
        var marks = new TreeMap<>(known);
        marks.putIfAbsent(nodeId, at);
        agents.forgotten(marks);
        return new Forgotten(recorded.stream().sorted().toList(), at);
    }

    /** Refuses while the node may hold a live volume's primary, as {@code others} list their copies and tombstones (all at once). */
    private static void checkNoPrimaryThere(String nodeId, List<Agent> others, boolean acceptPossibleLoss) {
        List<LostNodes.Copy> copies = new java.util.ArrayList<>();
        Set<String> tombstoned = new HashSet<>();
        ReplicaListings.of(others, ListReplicasRequest.getDefaultInstance(), ASK).values().forEach(l -> {
            l.getEntriesList().forEach(e -> copies.add(new LostNodes.Copy(e.getVolumeId(), e.getRole(), e.getEpoch(), e.getUnconfirmed())));
            l.getTombstonesList().forEach(t -> tombstoned.add(t.getVolumeId()));
        });
        LostNodes.checkNoPrimaryThere(nodeId, LostNodes.withoutPrimary(nodeId, copies, tombstoned, acceptPossibleLoss));
    }

    /** The nodes of {@code others} that recorded the mark; UNAVAILABLE naming the failures when none did. */
    private static List<String> recordOn(List<Agent> others, String nodeId, Instant at) {
        var ask = ForgetNodeRequest.newBuilder().setNodeId(nodeId).setForgottenAtUnixSeconds(at.getEpochSecond()).build();
        Map<String, String> failed = new ConcurrentHashMap<>();
        List<String> recorded = ReplicaListings.answered(others,
                agent -> agent.call(a -> a.nodeAgent().withDeadlineAfter(ASK.toMillis(), TimeUnit.MILLISECONDS).forgetNode(ask)),
                (agent, e) -> failed.put(agent.nodeId(), String.valueOf(e.getMessage()))).keySet().stream().map(Agent::nodeId).toList();
        if (recorded.isEmpty()) {
            throw DomainException.unavailable("no other node's agent answered to record that node '" + nodeId
                    + "' is forgotten" + (failed.isEmpty() ? "" : ": " + failed) + "; nothing recorded");
        }
        return recorded;
    }
}
