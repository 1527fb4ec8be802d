package io.csi4j.driver.cluster;

import io.csi4j.driver.DriverConfig;
import io.csi4j.proto.cluster.AgentStatus;
import io.csi4j.proto.cluster.ClusterStatusGrpc;
import io.csi4j.proto.cluster.GetClusterStatusRequest;
import io.csi4j.proto.cluster.GetClusterStatusResponse;
import io.csi4j.proto.csi.GetCapacityRequest;
import io.csi4j.proto.csi.Topology;
import io.grpc.stub.StreamObserver;
import io.csi4j.proto.cluster.ListReplicaRoundsRequest;
import io.csi4j.proto.cluster.ReplicaRound;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Optional;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import io.csi4j.proto.cluster.Copy;
import io.csi4j.proto.cluster.ListCopiesRequest;
import io.csi4j.proto.cluster.ForgetClusterNodeRequest;
import io.csi4j.proto.cluster.ForgetClusterNodeResponse;
import io.csi4j.proto.cluster.ForgetNodeRequest;
import io.csi4j.proto.cluster.ForgottenNode;

/**
 * The controller's side of csi4j.cluster.v1.ClusterStatus: every agent it knows, with what it said last and
 * its free capacity asked now (a few seconds at most per agent, all at once, so a silent agent does not hold
 * the answer up); and every replicated volume with its primary and each secondary's last round, from one
 * NodeAgent.ListReplicaRounds per agent ({@link ReplicationStatus}).
 */
public final class ClusterStatusService extends ClusterStatusGrpc.ClusterStatusImplBase {
    private static final long CAPACITY_DEADLINE_SECONDS = 3;
    private final Agents agents;
    private final java.time.Duration failoverAfter;

    public ClusterStatusService(Agents agents, java.time.Duration failoverAfter) {
        this.agents = agents;
        this.failoverAfter = failoverAfter;
    }

    /**
     * {@code csi4j cluster forget-node}: checks the node may be forgotten ({@link LostNodes#checkForgettable}), then has
     * every other answering agent record the mark durably before answering; the agents silent now are told by the
     * scheduler when they answer. The controller only caches the marks ({@link Agents#forgotten()}): a restarted one
     * reads them back from the agents before it serves.
     */
    @Override
    public void forgetNode(ForgetClusterNodeRequest req, StreamObserver<ForgetClusterNodeResponse> out) {
        String node = req.getNodeId();
        var known = agents.forgotten();
        if (!known.containsKey(node)) {
            LostNodes.checkForgettable(node, agents.all().stream().filter(a -> a.nodeId() != null)
                    .map(a -> new LostNodes.Seen(a.nodeId(), a.address(), a.answering(), a.silentFor())).toList(),
                    agents.unidentified().stream().map(Agent::address).toList(), failoverAfter);
        }
        var at = known.getOrDefault(node, java.time.Instant.ofEpochSecond(java.time.Instant.now().getEpochSecond()));
        var ask = ForgetNodeRequest.newBuilder().setNodeId(node).setForgottenAtUnixSeconds(at.getEpochSecond()).build();
        List<Agent> others = agents.nodes().stream().filter(a -> a.answering() && !node.equals(a.nodeId())).toList();
        if (!known.containsKey(node)) {
            List<LostNodes.Copy> copies = new java.util.concurrent.CopyOnWriteArrayList<>();
            java.util.Set<String> tombstoned = ConcurrentHashMap.newKeySet();
            Fanout.each(others, agent -> {
                var l = agent.call(a -> a.nodeAgent().withDeadlineAfter(CAPACITY_DEADLINE_SECONDS * 3, TimeUnit.SECONDS)
                        .listReplicas(io.csi4j.proto.cluster.ListReplicasRequest.getDefaultInstance()));
                l.getEntriesList().forEach(e -> copies.add(new LostNodes.Copy(e.getVolumeId(), e.getRole(), e.getEpoch(), e.getUnconfirmed())));
                l.getTombstonesList().forEach(t -> tombstoned.add(t.getVolumeId()));
                return null;
            });
            LostNodes.checkNoPrimaryThere(node, LostNodes.withoutPrimary(node, copies, tombstoned, req.getAcceptPossibleLoss()));
        }
        List<String> recorded = new java.util.concurrent.CopyOnWriteArrayList<>();
        Map<String, String> failed = new ConcurrentHashMap<>();
        Fanout.each(others, agent -> {
            try {
                agent.call(a -> a.nodeAgent().withDeadlineAfter(CAPACITY_DEADLINE_SECONDS * 3, TimeUnit.SECONDS).forgetNode(ask));
                recorded.add(agent.nodeId());
            } catch (RuntimeException e) {
                failed.put(agent.nodeId(), String.valueOf(e.getMessage()));
            }
            return null;
        });
        if (recorded.isEmpty()) {
            throw io.csi4j.driver.domain.DomainException.unavailable("no other node's agent answered to record that node '" + node
                    + "' is forgotten" + (failed.isEmpty() ? "" : ": " + failed) + "; nothing recorded");
        }
        var marks = new java.util.TreeMap<>(known);
        marks.putIfAbsent(node, at);
        agents.forgotten(marks);
        out.onNext(ForgetClusterNodeResponse.newBuilder().addAllRecordedBy(recorded.stream().sorted().toList())
                .setForgottenAtUnixSeconds(at.getEpochSecond()).build());
        out.onCompleted();
    }

    @Override
    public void getClusterStatus(GetClusterStatusRequest req, StreamObserver<GetClusterStatusResponse> out) {
        List<Agent> all = agents.all();
        Map<Agent, Long> capacity = new ConcurrentHashMap<>();
        Map<Agent, List<Copy>> copies = new ConcurrentHashMap<>();
        Map<Agent, Map<String, ReplicaRound>> rounds = new ConcurrentHashMap<>();
        Fanout.each(all.stream().filter(a -> a.nodeId() != null).toList(), agent -> {
            try {
                var answer = agent.call(a -> a.controller().withDeadlineAfter(CAPACITY_DEADLINE_SECONDS, TimeUnit.SECONDS)
                        .getCapacity(GetCapacityRequest.newBuilder().setAccessibleTopology(Topology.newBuilder()
                                .putSegments(DriverConfig.TOPOLOGY_KEY, a.topologyValue())).build()));
                capacity.put(agent, answer.getAvailableCapacity());
                copies.put(agent, agent.call(a -> a.nodeAgent().withDeadlineAfter(CAPACITY_DEADLINE_SECONDS, TimeUnit.SECONDS)
                        .listCopies(ListCopiesRequest.getDefaultInstance())).getCopiesList());
            } catch (RuntimeException e) {
                // silent (the agent now says so) or an error: no capacity this time
            }
            try {
                var answer = agent.call(a -> a.nodeAgent().withDeadlineAfter(CAPACITY_DEADLINE_SECONDS, TimeUnit.SECONDS)
                        .listReplicaRounds(ListReplicaRoundsRequest.getDefaultInstance()));
                Map<String, ReplicaRound> byVolume = new HashMap<>();
                answer.getReplicasList().forEach(r -> byVolume.put(r.getVolumeId(), r));
                rounds.put(agent, byVolume);
            } catch (RuntimeException e) {
                // silent: its replicas show as such
            }
            return null;
        });
        var response = GetClusterStatusResponse.newBuilder()
                .addAllDiscovery(agents.entries().stream().map(e -> e.host() + ":" + e.port()).toList());
        all.stream().sorted(Comparator.comparing((Agent a) -> a.nodeId() == null).thenComparing(a -> a.nodeId() == null ? "" : a.nodeId())
                .thenComparing(Agent::address)).forEach(agent -> response.addAgents(status(agent, capacity.get(agent)).toBuilder()
                        .addAllCopies(copies.getOrDefault(agent, List.of()))));
        List<String> volumeIds = rounds.values().stream().flatMap(m -> m.keySet().stream()).distinct().toList();
        response.addAllVolumes(ReplicationStatus.of(volumeIds, tag -> agents.byNodeTag(tag)
                .map(a -> new ReplicationStatus.Node(a.nodeId(), Optional.ofNullable(rounds.get(a))))
                .orElse(new ReplicationStatus.Node(tag, Optional.empty()))));
        agents.forgotten().forEach((node, at) -> response.addForgottenNodes(ForgottenNode.newBuilder().setNodeId(node)
                .setForgottenAtUnixSeconds(at.getEpochSecond())));
        out.onNext(response.build());
        out.onCompleted();
    }

    static AgentStatus status(Agent agent, Long capacity) {
        var s = AgentStatus.newBuilder().setAddress(agent.address()).setVersion(agent.version())
                .setLastAnswerUnixMillis(agent.lastAnswerMillis())
                .setSilentForMillis(agent.silentFor().toMillis());
        if (agent.nodeId() != null) s.setNodeId(agent.nodeId());
        String refusal = agent.refusal();
        if (refusal != null) {
            s.setState(AgentStatus.State.REFUSED).setReason(refusal);
        } else if (agent.nodeId() == null || !agent.answering()) {
            String problem = agent.problem();
            s.setState(AgentStatus.State.SILENT).setReason(problem == null ? "not answering" : problem);
        } else {
            s.setState(AgentStatus.State.SERVING);
        }
        if (capacity != null) s.setHasAvailableCapacity(true).setAvailableCapacity(capacity);
        return s.build();
    }
}
