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
    private final NodeForgetting forgetting;

    public ClusterStatusService(Agents agents, java.time.Duration failoverAfter) {
        this.agents = agents;
        this.forgetting = new NodeForgetting(agents, failoverAfter);
    }

    /** {@code csi4j cluster forget-node} ({@link NodeForgetting}). */
    @Override
    public void forgetNode(ForgetClusterNodeRequest req, StreamObserver<ForgetClusterNodeResponse> out) {
        var done = forgetting.forget(req.getNodeId(), req.getAcceptPossibleLoss());
        out.onNext(ForgetClusterNodeResponse.newBuilder().addAllRecordedBy(done.recordedBy())
                .setForgottenAtUnixSeconds(done.at().getEpochSecond()).build());
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
