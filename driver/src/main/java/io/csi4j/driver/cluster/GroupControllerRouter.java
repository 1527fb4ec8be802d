package io.csi4j.driver.cluster;

import static io.csi4j.driver.cluster.ControllerRouter.reply;

import io.csi4j.driver.id.ObjectId;
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
 * {@link CrossNodeGroupSnapshots} (freeze all, cut all, thaw all across the agents).
 */
public final class GroupControllerRouter extends GroupControllerGrpc.GroupControllerImplBase {
    private final Owners owners;
    private final CrossNodeGroupSnapshots crossNode;

    public GroupControllerRouter(Agents agents) {
        this.owners = new Owners(agents);
        this.crossNode = new CrossNodeGroupSnapshots(agents);
    }

    @Override
    public void groupControllerGetCapabilities(GroupControllerGetCapabilitiesRequest req,
                                               StreamObserver<GroupControllerGetCapabilitiesResponse> out) {
        reply(out, Capabilities.groupController(Type.CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT));
    }

    @Override
    public void createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest req, StreamObserver<CreateVolumeGroupSnapshotResponse> out) {
        Map<Agent, List<String>> byNode = owners.byNode(Kind.VOLUME, req.getSourceVolumeIdsList(), "source volume");
        if (byNode.size() <= 1 || new HashSet<>(req.getSourceVolumeIdsList()).size() != req.getSourceVolumeIdsCount()) {
            // one node (or a request that node refuses as it stands, e.g. duplicate ids): that node answers
            Agent node = byNode.isEmpty() ? owners.of(Kind.VOLUME, "", "source volume") : byNode.keySet().iterator().next();
            reply(out, node.call(a -> a.groupController().createVolumeGroupSnapshot(req)));
            return;
        }
        if (!req.getParametersMap().isEmpty()) {
            throw CsiException.invalidArgument("unknown group snapshot parameters " + req.getParametersMap().keySet() + "; this driver takes none");
        }
        reply(out, CreateVolumeGroupSnapshotResponse.newBuilder()
                .setGroupSnapshot(crossNode.create(req.getName(), req.getSourceVolumeIdsList(), byNode)).build());
    }

    @Override
    public void deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest req, StreamObserver<DeleteVolumeGroupSnapshotResponse> out) {
        if (clusterWide(req.getGroupSnapshotId())) {
            crossNode.delete(req.getGroupSnapshotId(), req.getSnapshotIdsList());
            reply(out, DeleteVolumeGroupSnapshotResponse.getDefaultInstance());
            return;
        }
        reply(out, group(req.getGroupSnapshotId()).call(a -> a.groupController().deleteVolumeGroupSnapshot(req)));
    }

    @Override
    public void getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest req, StreamObserver<GetVolumeGroupSnapshotResponse> out) {
        if (clusterWide(req.getGroupSnapshotId())) {
            reply(out, GetVolumeGroupSnapshotResponse.newBuilder()
                    .setGroupSnapshot(crossNode.get(req.getGroupSnapshotId(), req.getSnapshotIdsList())).build());
            return;
        }
        reply(out, group(req.getGroupSnapshotId()).call(a -> a.groupController().getVolumeGroupSnapshot(req)));
    }

    private static boolean clusterWide(String id) {
        return ObjectId.parse(Kind.GROUP_SNAPSHOT, id).map(ObjectId::clusterWide).orElse(false);
    }

    private Agent group(String id) {
        return owners.of(Kind.GROUP_SNAPSHOT, id, "group snapshot");
    }
}
