package io.csi4j.driver.cluster;

import static io.csi4j.driver.csi.WireMapping.reply;

import io.csi4j.driver.csi.WireMapping;
import io.csi4j.driver.engine.FreezeHold;
import io.csi4j.driver.engine.Freezer;
import io.csi4j.driver.engine.StorageEngine;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ObjectId.Kind;
import io.csi4j.driver.mobility.Copies;
import io.csi4j.driver.mobility.SourceSender;
import io.csi4j.driver.mobility.VolumeImports;
import io.csi4j.driver.model.State;
import io.csi4j.driver.snapshot.GroupSnapshots;
import io.csi4j.driver.snapshot.Snapshots;
import io.csi4j.driver.storage.StorageException;
import io.csi4j.driver.volume.Volumes;
import io.csi4j.proto.cluster.*;
import io.csi4j.proto.csi.CreateVolumeResponse;
import io.csi4j.sdk.CsiException;
import io.csi4j.sdk.StatusMapping;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.replication.ReplicaState;
import io.csi4j.driver.replication.ReplicaStates;
import io.csi4j.driver.replication.Rounds;
import io.csi4j.proto.cluster.CutPointRequest;
import io.csi4j.proto.cluster.ListReplicasRequest;
import io.csi4j.proto.cluster.ListReplicasResponse;
import io.csi4j.proto.cluster.ReplicaEntry;
import io.csi4j.proto.cluster.CutPointResponse;
import io.csi4j.proto.cluster.SyncReplicaRequest;
import io.csi4j.proto.cluster.SyncReplicaResponse;
import io.csi4j.proto.cluster.DemoteReplicaRequest;
import io.csi4j.proto.cluster.DemoteReplicaResponse;
import io.csi4j.proto.cluster.CreateReplicaRequest;
import io.csi4j.proto.cluster.CreateReplicaResponse;
import io.csi4j.proto.cluster.DeleteReplicaRequest;
import io.csi4j.proto.cluster.DeleteReplicaResponse;
import io.csi4j.proto.cluster.FailoverReplicaRequest;
import io.csi4j.proto.cluster.FailoverReplicaResponse;
import io.csi4j.proto.cluster.FenceReplicaRequest;
import io.csi4j.proto.cluster.FenceReplicaResponse;
import io.csi4j.proto.cluster.GetReplicaRequest;
import io.csi4j.proto.cluster.GetReplicaResponse;
import io.csi4j.proto.cluster.LastRound;
import io.csi4j.proto.cluster.ReplicaRound;
import io.csi4j.proto.cluster.ForgetDeletedRequest;
import io.csi4j.proto.cluster.ForgetDeletedResponse;
import io.csi4j.proto.cluster.Tombstone;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;

/**
 * The agent's side of csi4j.cluster.v1.NodeAgent: what the controller needs that CSI has no call for (a volume
 * or group snapshot by name; the freeze / cut / thaw steps of a group snapshot that spans nodes).
 */
public final class NodeAgentService extends NodeAgentGrpc.NodeAgentImplBase {
    /** A controller asking for longer is capped here: a workload stays frozen at most this long. */
    static final Duration LONGEST_HOLD = Duration.ofSeconds(60);
    /** How much of a copy may wait in the transport's queue before the sender waits (a few 1 MiB chunks). */
    static final int SEND_QUEUE_BYTES = 4 << 20;

    private final StorageEngine engine;
    private final Volumes volumes;
    private final GroupSnapshots groupSnapshots;
    private final FreezeHolds holds = new FreezeHolds();
    private final SourceSender sender;
    private final VolumeImports imports;
    private final Copies copies;
    private final Peers peers;
    private final ReplicaStates replicas;
    private final Rounds rounds;
    private final Snapshots snapshots;

    public NodeAgentService(StorageEngine engine, Volumes volumes, GroupSnapshots groupSnapshots,
                            SourceSender sender, VolumeImports imports, Copies copies, Peers peers, ReplicaStates replicas,
                            Rounds rounds, Snapshots snapshots) {
        this.snapshots = snapshots;
        this.replicas = replicas;
        this.rounds = rounds;
        this.engine = engine;
        this.volumes = volumes;
        this.groupSnapshots = groupSnapshots;
        this.sender = sender;
        this.imports = imports;
        this.copies = copies;
        this.peers = peers;
    }

    @Override
    public void importVolume(ImportVolumeRequest req, StreamObserver<ImportVolumeResponse> out) {
        if (!req.hasSourceNode() || req.getSourceNode().getAddress().isEmpty()) throw CsiException.invalidArgument("source_node is REQUIRED");
        var result = imports.importVolume(WireMapping.newVolume(req.getRequest()), new PeerSource(peers, req.getSourceNode()));
        reply(out, ImportVolumeResponse.newBuilder()
                .setResponse(CreateVolumeResponse.newBuilder().setVolume(WireMapping.volume(result.volume())))
                .setBytesReceived(result.bytesReceived()).setBaseSnapshotId(result.baseSnapshotId()).build());
    }

    /**
     * Sends on a thread of its own: gRPC tells a handler that the receiver can take more (onReady) only after the
     * handler returned, so a sender that waits for that must not be the handler.
     */
    @Override
    public void readSource(ReadSourceRequest req, StreamObserver<SourceChunk> out) {
        var call = (ServerCallStreamObserver<SourceChunk>) out;
        var gate = new ReadyGate(call);
        // ready while a few chunks are queued, not only once the last one is nearly gone: this thread prepares the
        // next chunk while the transport encrypts and writes the previous ones
        call.setOnReadyThreshold(SEND_QUEUE_BYTES);
        String peer = req.getReaderNodeId().isEmpty() ? "a peer" : req.getReaderNodeId();
        Context context = Context.current();
        Thread.ofVirtual().name("csi4j-send").start(context.wrap(() -> {
            try {
                sender.send(CopyWire.query(req), peer, new RangeBatches(req.getRangeBatchBytes(), chunk -> {
                    try {
                        if (!gate.awaitReady()) return false;
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return false;
                    }
                    call.onNext(chunk);
                    return true;
                }), call::isCancelled);
                if (!call.isCancelled()) call.onCompleted();
            } catch (RuntimeException e) {
                RuntimeException answer = AgentStatus.toStatus(e);
                if (!call.isCancelled()) call.onError(StatusMapping.isExpected(answer) ? StatusMapping.toException(answer)
                        : Status.INTERNAL.withDescription("sending " + req.getSourceCase() + ": " + e).asRuntimeException());
            }
        }));
    }

    @Override
    public void listCopies(ListCopiesRequest req, StreamObserver<ListCopiesResponse> out) {
        var b = ListCopiesResponse.newBuilder();
        for (var c : copies.now()) {
            b.addCopies(Copy.newBuilder().setName(c.name).setIncoming(c.incoming).setPeerNodeId(c.peerNodeId)
                    .setSourceId(c.sourceId).setBytesDone(c.done()).setBytesTotal(c.total()));
        }
        reply(out, b.build());
    }

    /**
     * The state first, then the volume (blank on every replica: a secondary's copy is replaced whole by each round):
     * a replica's volume never exists here without the state that fences it.
     */
    @Override
    public void createReplica(CreateReplicaRequest req, StreamObserver<CreateReplicaResponse> out) {
        ReplicatedVolumeId id = replicatedId(req.getVolumeId());
        var initial = new ReplicaState(1, req.getPrimary() ? ReplicaState.Role.PRIMARY : ReplicaState.Role.SECONDARY, "");
        replicas.create(id, initial);
        var made = volumes.creation().createReplica(WireMapping.newVolume(req.getRequest()), id);
        reply(out, CreateReplicaResponse.newBuilder().setVolume(WireMapping.volume(made)).build());
    }

    @Override
    public void cutPoint(CutPointRequest req, StreamObserver<CutPointResponse> out) {
        if (req.getHolderNodeId().isEmpty()) throw CsiException.invalidArgument("holder_node_id is REQUIRED");
        String point = rounds.cutPoint(replicatedId(req.getVolumeId()), req.getHolderNodeId(), req.getHeldPoint(),
                req.getMayKeepHeld());
        reply(out, CutPointResponse.newBuilder().setPoint(point).build());
    }

    @Override
    public void syncReplica(SyncReplicaRequest req, StreamObserver<SyncReplicaResponse> out) {
        if (!req.hasPrimary() || req.getPrimary().getAddress().isEmpty()) throw CsiException.invalidArgument("primary is REQUIRED");
        var pulled = rounds.pull(replicatedId(req.getVolumeId()), new PeerPrimary(peers, req.getPrimary()), req.getPromoteEpoch(),
                req.getReplacedNodeIds());
        reply(out, SyncReplicaResponse.newBuilder().setPoint(pulled.point()).setBytesReceived(pulled.bytesReceived())
                .setBasePoint(pulled.base()).build());
    }

    @Override
    public void listReplicas(ListReplicasRequest req, StreamObserver<ListReplicasResponse> out) {
        var confirmations = replicas.confirmations();
        confirmations.heard();                    // a gap first: a resumed agent lists its primaries unconfirmed
        confirmations.failoverAfter(Duration.ofMillis(req.getFailoverAfterMillis()));
        var b = ListReplicasResponse.newBuilder();
        for (var e : rounds.list()) {
            boolean unconfirmed = e.state().writable() && !confirmations.confirmed(e.id(), e.state().epoch());
            b.addEntries(ReplicaEntry.newBuilder().setVolumeId(e.id().toString()).setRole(e.state().role().name())
                    .setEpoch(e.state().epoch()).setPoint(e.state().point()).setDue(e.due()).setUnconfirmed(unconfirmed)
                    .setInUse(e.inUse()));
        }
        replicas.tombstones().forEach((id, at) -> b.addTombstones(Tombstone.newBuilder().setVolumeId(id.toString())
                .setDeletedAtUnixSeconds(at.getEpochSecond())));
        replicas.forgottenNodes().all().forEach((node, at) -> b.addForgottenNodes(ForgottenNode.newBuilder().setNodeId(node)
                .setForgottenAtUnixSeconds(at.getEpochSecond())));
        reply(out, b.build());
    }

    @Override
    public void listReplicaRounds(ListReplicaRoundsRequest req, StreamObserver<ListReplicaRoundsResponse> out) {
        var b = ListReplicaRoundsResponse.newBuilder();
        var now = java.time.Instant.now();
        for (var s : rounds.status()) {
            var r = ReplicaRound.newBuilder().setVolumeId(s.id().toString()).setRole(s.state().role().name())
                    .setEpoch(s.state().epoch()).setPoint(s.state().point()).setIntervalMillis(s.interval().toMillis())
                    .setFailover(s.state().failover());
            s.last().ifPresent(last -> r.setHasRound(true).setLagMillis(last.lag(now).toMillis())
                    .setLastSyncUnixMillis(last.completedAt().toEpochMilli()).setLastRoundBytes(last.bytes())
                    .setLastRoundMillis(last.took().toMillis()));
            b.addReplicas(r);
        }
        reply(out, b.build());
    }

    @Override
    public void demoteReplica(DemoteReplicaRequest req, StreamObserver<DemoteReplicaResponse> out) {
        if (req.getSuccessorNodeId().isEmpty()) throw CsiException.invalidArgument("successor_node_id is REQUIRED");
        rounds.demote(replicatedId(req.getVolumeId()), req.getEpoch(), req.getSuccessorNodeId());
        reply(out, DemoteReplicaResponse.getDefaultInstance());
    }

    @Override
    public void failoverReplica(FailoverReplicaRequest req, StreamObserver<FailoverReplicaResponse> out) {
        if (req.getReplacedNodeId().isEmpty()) throw CsiException.invalidArgument("replaced_node_id is REQUIRED");
        var now = rounds.failover(replicatedId(req.getVolumeId()), req.getEpoch(), req.getReplacedNodeId());
        reply(out, FailoverReplicaResponse.newBuilder().setPoint(now.point()).setCondition(now.failover()).build());
    }

    @Override
    public void followReplica(FollowReplicaRequest req, StreamObserver<FollowReplicaResponse> out) {
        if (req.getEpoch() < 1) throw CsiException.invalidArgument("epoch must be at least 1");
        var now = rounds.follow(replicatedId(req.getVolumeId()), req.getEpoch());
        reply(out, FollowReplicaResponse.newBuilder().setRole(now.role().name()).setPoint(now.point()).build());
    }

    @Override
    public void fenceReplica(FenceReplicaRequest req, StreamObserver<FenceReplicaResponse> out) {
        var now = rounds.fence(replicatedId(req.getVolumeId()), req.getEpoch());
        reply(out, FenceReplicaResponse.newBuilder().setRole(now.role().name()).build());
    }

    @Override
    public void getReplica(GetReplicaRequest req, StreamObserver<GetReplicaResponse> out) {
        var b = GetReplicaResponse.newBuilder();
        replicas.get(replicatedId(req.getVolumeId())).ifPresent(s ->
                b.setPresent(true).setEpoch(s.epoch()).setRole(s.role().name()).setPoint(s.point()).setSuccessor(s.successor())
                        .setFailover(s.failover()).setReplacedCarried(s.replaced())
                        .setConfirmedPrimary(s.writable() && replicas.confirmations().confirmed(replicatedId(req.getVolumeId()), s.epoch())));
        rounds.lastRound(replicatedId(req.getVolumeId())).ifPresent(r -> b.setLastRound(LastRound.newBuilder()
                .setCutUnixNanos(nanos(r.cutAt())).setCompletedUnixNanos(nanos(r.completedAt())).setBytes(r.bytes())
                .setTookNanos(r.took().toNanos())));
        rounds.pointCutAt(replicatedId(req.getVolumeId())).ifPresent(t -> b.setPointCutUnixNanos(nanos(t)));
        b.setDeleted(replicas.deleted(replicatedId(req.getVolumeId())).isPresent());
        reply(out, b.build());
    }

    /** The volume (FAILED_PRECONDITION while published or staged here), then the state: a retry finishes either. */
    @Override
    public void deleteReplica(DeleteReplicaRequest req, StreamObserver<DeleteReplicaResponse> out) {
        rounds.delete(replicatedId(req.getVolumeId()), req.getTombstone());
        reply(out, DeleteReplicaResponse.getDefaultInstance());
    }

    private static long nanos(java.time.Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    @Override
    public void forgetDeleted(ForgetDeletedRequest req, StreamObserver<ForgetDeletedResponse> out) {
        replicas.forgetDeleted(replicatedId(req.getVolumeId()));
        reply(out, ForgetDeletedResponse.getDefaultInstance());
    }

    /** Records a node declared permanently lost (the controller's ForgetNode, or its scheduler telling a node that lacks it). */
    @Override
    public void forgetNode(ForgetNodeRequest req, StreamObserver<ForgetNodeResponse> out) {
        var at = req.getForgottenAtUnixSeconds() > 0 ? java.time.Instant.ofEpochSecond(req.getForgottenAtUnixSeconds())
                : java.time.Instant.now();
        replicas.forgottenNodes().forget(req.getNodeId(), at, rounds.nodeId());
        reply(out, ForgetNodeResponse.getDefaultInstance());
    }

    @Override
    public void confirmPrimary(ConfirmPrimaryRequest req, StreamObserver<ConfirmPrimaryResponse> out) {
        boolean confirmed = rounds.confirm(replicatedId(req.getVolumeId()), req.getEpoch());
        reply(out, ConfirmPrimaryResponse.newBuilder().setConfirmed(confirmed).build());
    }

    private static ReplicatedVolumeId replicatedId(String text) {
        return ReplicatedVolumeId.parse(text).orElseThrow(() -> CsiException.invalidArgument("'" + text + "' is not a replicated volume id"));
    }

    @Override
    public void findVolume(FindVolumeRequest req, StreamObserver<FindVolumeResponse> out) {
        // any row counts, also one a crash left half made: CreateVolume on this node finishes or answers it
        String id = req.getName().isEmpty() ? "" : volumes.reads().byName(req.getName()).map(v -> v.id()).orElse("");
        reply(out, FindVolumeResponse.newBuilder().setVolumeId(id).build());
    }

    @Override
    public void freezeVolumes(FreezeVolumesRequest req, StreamObserver<FreezeVolumesResponse> out) {
        if (req.getHoldId().isEmpty()) throw CsiException.invalidArgument("hold_id is REQUIRED");
        List<String> ids = localVolumes(req.getVolumeIdsList());
        if (req.getHoldMillis() <= 0) throw CsiException.invalidArgument("hold_millis must be positive");
        Duration hold = Duration.ofMillis(Math.min(req.getHoldMillis(), LONGEST_HOLD.toMillis()));
        holds.add(req.getHoldId(), engine.capability(Freezer.class).orElseThrow(() ->
                StorageException.unsupported("the " + engine.name() + " engine cannot hold volumes frozen")).holdFrozen(ids), hold);
        reply(out, FreezeVolumesResponse.getDefaultInstance());
    }

    @Override
    public void cutGroupSnapshot(CutGroupSnapshotRequest req, StreamObserver<CutGroupSnapshotResponse> out) {
        ObjectId id = ObjectId.parse(Kind.GROUP_SNAPSHOT, req.getGroupSnapshotId()).filter(ObjectId::clusterWide)
                .orElseThrow(() -> CsiException.invalidArgument("group_snapshot_id '" + req.getGroupSnapshotId() + "' is not a cluster-wide id"));
        if (req.getName().isEmpty()) throw CsiException.invalidArgument("name is REQUIRED");
        FreezeHold held = holds.get(req.getHoldId()).orElseThrow(() -> CsiException.aborted("freeze hold '" + req.getHoldId()
                + "' is not held on this node (it lapsed or was thawed); the group snapshot must start again"));
        var part = groupSnapshots.createPart(req.getName(), id, req.getVolumeIdsList(), held);  // it checks the volumes
        reply(out, CutGroupSnapshotResponse.newBuilder().setPart(WireMapping.groupSnapshot(part)).build());
    }

    @Override
    public void thawVolumes(ThawVolumesRequest req, StreamObserver<ThawVolumesResponse> out) {
        holds.release(req.getHoldId());
        reply(out, ThawVolumesResponse.getDefaultInstance());
    }

    @Override
    public void findGroupSnapshot(FindGroupSnapshotRequest req, StreamObserver<FindGroupSnapshotResponse> out) {
        var b = FindGroupSnapshotResponse.newBuilder();
        if (!req.getName().isEmpty()) {
            groupSnapshots.byName(req.getName()).ifPresent(g -> b.setGroupSnapshotId(g.id())
                    .addAllSourceVolumeIds(g.sourceVolumeIds()).setReady(g.state() == State.READY));
        }
        reply(out, b.build());
    }

    @Override
    public void findSnapshot(FindSnapshotRequest req, StreamObserver<FindSnapshotResponse> out) {
        var b = FindSnapshotResponse.newBuilder();
        snapshots.byName(req.getName()).ifPresent(s -> b.setSnapshotId(s.id()).setSourceVolumeId(s.sourceVolumeId())
                .setAnsweredAtUnixNanos(nanos(s.updatedAt())));
        reply(out, b.build());
    }

    @Override
    public void listNamedSnapshots(ListNamedSnapshotsRequest req, StreamObserver<ListNamedSnapshotsResponse> out) {
        var b = ListNamedSnapshotsResponse.newBuilder();
        for (var s : snapshots.namedOfReplicated()) {
            b.addSnapshots(NamedSnapshot.newBuilder().setName(s.name()).setSnapshotId(s.id())
                    .setSourceVolumeId(s.sourceVolumeId()).setAnsweredAtUnixNanos(nanos(s.updatedAt())));
        }
        reply(out, b.build());
    }

    /** Ids of volumes of this node that exist and are ready; NOT_FOUND / FAILED_PRECONDITION otherwise. */
    private List<String> localVolumes(List<String> ids) {
        if (ids.isEmpty()) throw CsiException.invalidArgument("volume_ids is REQUIRED");
        if (new HashSet<>(ids).size() != ids.size()) throw CsiException.invalidArgument("volume_ids has duplicates");
        for (String id : ids) volumes.reads().readyVolume(id, "source volume");
        return ids;
    }
}
