package io.csi4j.driver.cluster;

import static io.csi4j.driver.csi.WireMapping.reply;

import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.id.ObjectId.Kind;
import io.csi4j.sdk.CsiException;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import io.csi4j.proto.csi.*;
import io.csi4j.proto.csi.GroupControllerServiceCapability.RPC.Type;
import io.csi4j.sdk.capability.Capabilities;
import io.grpc.stub.StreamObserver;

/**
 * csi.v1.GroupController of the cluster controller. A group snapshot whose members are all on one node is
 * that node's (write-order consistent there); one whose members are on several nodes is cut by
 * {@link CrossNodeGroupSnapshots} (freeze all, cut all, thaw all across the agents). A replicated member is cut on
 * its current primary's node (UNAVAILABLE while a handoff runs: the CO retries), as CreateSnapshot of it is.
 */
public final class GroupControllerRouter extends GroupControllerGrpc.GroupControllerImplBase {
    private final Owners owners;
    private final CrossNodeGroupSnapshots crossNode;
    private final Replicas replicas;

    public GroupControllerRouter(Agents agents) {
        this.owners = new Owners(agents);
        this.replicas = new Replicas(agents, new Placement(agents), Replicas.FAILOVER_AFTER);  // only finds primaries
        this.crossNode = new CrossNodeGroupSnapshots(agents);
    }

    @Override
    public void groupControllerGetCapabilities(GroupControllerGetCapabilitiesRequest req,
                                               StreamObserver<GroupControllerGetCapabilitiesResponse> out) {
        reply(out, Capabilities.groupController(Type.CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT));
    }

    @Override
    public void createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest req, StreamObserver<CreateVolumeGroupSnapshotResponse> out) {
        TransportThread.route(out, () -> create(req, out));
    }

    private void create(CreateVolumeGroupSnapshotRequest req, StreamObserver<CreateVolumeGroupSnapshotResponse> out) {
        Map<Agent, List<String>> byNode = owners.byServingNode(req.getSourceVolumeIdsList(), "source volume", replicas::primary);
        // a replicated member's primary may have moved since a group of this name was cut: answer where it was cut
        var named = req.getSourceVolumeIdsList().stream().anyMatch(id -> ReplicatedVolumeId.parse(id).isPresent())
                ? crossNode.named(req.getName()) : java.util.Optional.<CrossNodeGroupSnapshots.Named>empty();
        if (named.isPresent() && !named.get().clusterWide()) {
            named.get().node().forward(GroupControllerGrpc.getCreateVolumeGroupSnapshotMethod(), req, out);
            return;
        }
        boolean spans = named.isPresent() || byNode.size() > 1;
        if (!spans || new HashSet<>(req.getSourceVolumeIdsList()).size() != req.getSourceVolumeIdsCount()) {
            // one node (or a request that node refuses as it stands, e.g. duplicate ids): that node answers
            Agent node = byNode.isEmpty() ? owners.of(Kind.VOLUME, "", "source volume") : byNode.keySet().iterator().next();
            node.forward(GroupControllerGrpc.getCreateVolumeGroupSnapshotMethod(), req, out);
            return;
        }
        TransportThread.mayWait();  // freeze all, cut all, thaw all: on a thread of its own
        if (!req.getParametersMap().isEmpty()) {
            throw CsiException.invalidArgument("unknown group snapshot parameters " + req.getParametersMap().keySet() + "; this driver takes none");
        }
        reply(out, CreateVolumeGroupSnapshotResponse.newBuilder()
                .setGroupSnapshot(crossNode.create(req.getName(), req.getSourceVolumeIdsList(), byNode)).build());
    }

    @Override
    public void deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest req, StreamObserver<DeleteVolumeGroupSnapshotResponse> out) {
        TransportThread.route(out, () -> delete(req, out));
    }

    private void delete(DeleteVolumeGroupSnapshotRequest req, StreamObserver<DeleteVolumeGroupSnapshotResponse> out) {
        if (clusterWide(req.getGroupSnapshotId())) {
            TransportThread.mayWait();  // every node is asked
            crossNode.delete(req.getGroupSnapshotId(), req.getSnapshotIdsList());
            reply(out, DeleteVolumeGroupSnapshotResponse.getDefaultInstance());
            return;
        }
        group(req.getGroupSnapshotId()).forward(GroupControllerGrpc.getDeleteVolumeGroupSnapshotMethod(), req, out);
    }

    @Override
    public void getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest req, StreamObserver<GetVolumeGroupSnapshotResponse> out) {
        TransportThread.route(out, () -> get(req, out));
    }

    private void get(GetVolumeGroupSnapshotRequest req, StreamObserver<GetVolumeGroupSnapshotResponse> out) {
        if (clusterWide(req.getGroupSnapshotId())) {
            TransportThread.mayWait();  // every node is asked
            reply(out, GetVolumeGroupSnapshotResponse.newBuilder()
                    .setGroupSnapshot(crossNode.get(req.getGroupSnapshotId(), req.getSnapshotIdsList())).build());
            return;
        }
        group(req.getGroupSnapshotId()).forward(GroupControllerGrpc.getGetVolumeGroupSnapshotMethod(), req, out);
    }

    private static boolean clusterWide(String id) {
        return ObjectId.parse(Kind.GROUP_SNAPSHOT, id).map(ObjectId::clusterWide).orElse(false);
    }

    private Agent group(String id) {
        return owners.of(Kind.GROUP_SNAPSHOT, id, "group snapshot");
    }
}
