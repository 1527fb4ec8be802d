package io.csi4j.driver.cluster;

import io.csi4j.driver.id.ObjectId.Kind;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.replication.ReplicationRules;
import io.csi4j.driver.replication.ReplicationRules.AlreadyPrimary;
import io.csi4j.driver.replication.ReplicationRules.Decision;
import io.csi4j.driver.replication.ReplicationRules.Failover;
import io.csi4j.driver.replication.ReplicationRules.HandingOver;
import io.csi4j.driver.replication.ReplicationRules.Info;
import io.csi4j.driver.replication.ReplicationRules.Resync;
import io.csi4j.driver.replication.ReplicationRules.StepDown;
import io.csi4j.driver.replication.ReplicationRules.Unreachable;
import io.csi4j.driver.replication.RoundLog;
import io.csi4j.driver.replication.VolumeReplication;
import io.csi4j.proto.cluster.DemoteReplicaRequest;
import io.csi4j.proto.cluster.PeerAgent;
import io.csi4j.proto.cluster.SyncReplicaRequest;
import io.csi4j.proto.csi.ControllerGetVolumeRequest;
import io.csi4j.sdk.CsiException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;

/**
 * {@link VolumeReplication} in the cluster controller: asks every replica's node {@code GetReplica} ({@link
 * ReplicaAnswers}, as routing does), lets {@link ReplicationRules} decide, and carries the decision out with the
 * agents' replication calls (the same ones a handoff and a failover use, {@link PrimaryMoves}). Stateless, like every
 * router.
 */
public final class ClusterVolumeReplication implements VolumeReplication {
    private static final Logger LOG = Logger.getLogger(ClusterVolumeReplication.class.getName());

    private final Owners owners;
    private final Agents agents;
    private final PrimaryMoves moves;

    public ClusterVolumeReplication(Agents agents, Duration failoverAfter) {
        this.owners = new Owners(agents);
        this.agents = agents;
        this.moves = new PrimaryMoves(agents, new Replicas(agents, new Placement(agents), failoverAfter), failoverAfter);
    }

    @Override
    public void enable(String volumeId) {
        ReplicationRules.enable(volumeId, replicated(volumeId));
    }

    @Override
    public void disable(String volumeId) {
        ReplicationRules.disable(volumeId, replicated(volumeId));
    }

    @Override
    public void promote(String volumeId, boolean force) {
        var set = ReplicaAnswers.ask(agents, replicatedOrRefuse(volumeId));
        switch (ReplicationRules.promote(volumeId, set.views(), set.forgotten(), force)) {
            case AlreadyPrimary p -> { }
            case HandingOver h -> pullFinal(set, h.from(), h.to(), h.epoch());
            case Failover f -> moves.failoverTo(set, set.agent(f.to()));
            case Decision d -> unexpected(d);
        }
    }

    @Override
    public void demote(String volumeId, boolean force) {
        var set = ReplicaAnswers.ask(agents, replicatedOrRefuse(volumeId));
        switch (ReplicationRules.demote(volumeId, set.views())) {
            case HandingOver h -> { }
            case StepDown s -> {
                set.agent(s.from()).call(a -> a.nodeAgent().demoteReplica(DemoteReplicaRequest.newBuilder()
                        .setVolumeId(volumeId).setEpoch(s.epoch()).setSuccessorNodeId(s.to()).build()));
                LOG.info(() -> "volume " + volumeId + " demoted on node '" + s.from() + "' towards '" + s.to() + "' at epoch " + s.epoch());
            }
            case Decision d -> unexpected(d);
        }
    }

    @Override
    public boolean resync(String volumeId, boolean force) {
        var set = ReplicaAnswers.ask(agents, replicatedOrRefuse(volumeId));
        return switch (ReplicationRules.resync(volumeId, set.views())) {
            case Resync r -> {
                var from = peer(set.agent(r.primary()));
                var pulled = Fanout.all(r.secondaries().stream().map(set::agent).toList(), a -> a.nodeAgent().syncReplica(
                        SyncReplicaRequest.newBuilder().setVolumeId(volumeId).setPrimary(from).build()));
                var silent = new ArrayList<>(r.silent());
                silent.addAll(pulled.silent());
                if (!silent.isEmpty()) {
                    throw CsiException.unavailable("volume " + volumeId + ": resynced " + pulled.results().size()
                            + " secondaries; not answering: " + String.join("; ", silent));
                }
                if (!r.others().isEmpty()) {
                    LOG.warning(() -> "volume " + volumeId + ": resync leaves copies that do not follow the primary on " + r.others());
                }
                yield r.complete();
            }
            case Decision d -> unexpected(d);
        };
    }

    @Override
    public RoundLog.Round info(String volumeId) {
        var set = ReplicaAnswers.ask(agents, replicatedOrRefuse(volumeId));
        return switch (ReplicationRules.info(volumeId, set.views())) {
            case Info i -> i.round();
            case Decision d -> unexpected(d);
        };
    }

    /** An Unreachable decision is UNAVAILABLE (the caller retries); no other decision reaches here. */
    private static <T> T unexpected(Decision d) {
        if (d instanceof Unreachable u) throw CsiException.unavailable(u.why() + "; waiting for: " + String.join(", ", u.nodes()));
        throw new IllegalStateException("no action for " + d);
    }

    /** The last step of a handoff: {@code to} pulls the old primary's final point and becomes primary at {@code epoch}. */
    private void pullFinal(ReplicaAnswers set, String from, String to, long epoch) {
        var pulled = set.agent(to).call(a -> a.nodeAgent().syncReplica(SyncReplicaRequest.newBuilder().setVolumeId(set.id().toString())
                .setPrimary(peer(set.agent(from))).setPromoteEpoch(epoch).build()));
        LOG.info(() -> "volume " + set.id() + " promoted on node '" + to + "' at epoch " + epoch + ": "
                + pulled.getBytesReceived() + " bytes since the last point");
    }

    private static PeerAgent peer(Agent a) {
        return PeerAgent.newBuilder().setNodeId(a.nodeId()).setAddress(a.address()).setAuthority(a.authority()).build();
    }

    /** Whether the volume is replicated; an ordinary id is asked of its node (NOT_FOUND when it does not exist). */
    private boolean replicated(String volumeId) {
        var id = ReplicatedVolumeId.parse(volumeId);
        if (id.isPresent()) {
            if (ReplicationRules.exists(volumeId, ReplicaAnswers.ask(agents, id.get()).views()) instanceof Unreachable u) unexpected(u);
            return true;
        }
        owners.of(Kind.VOLUME, volumeId, "volume").call(a -> a.controller().controllerGetVolume(
                ControllerGetVolumeRequest.newBuilder().setVolumeId(volumeId).build()));
        return false;
    }

    private ReplicatedVolumeId replicatedOrRefuse(String volumeId) {
        var id = ReplicatedVolumeId.parse(volumeId);
        if (id.isPresent()) return id.get();
        owners.of(Kind.VOLUME, volumeId, "volume").call(a -> a.controller().controllerGetVolume(
                ControllerGetVolumeRequest.newBuilder().setVolumeId(volumeId).build()));      // NOT_FOUND when it does not exist
        throw io.csi4j.driver.domain.DomainException.precondition("volume " + volumeId
                + " is not replicated (csi4j.io/replicas 1): there is nothing to promote, demote or resync");
    }
}
