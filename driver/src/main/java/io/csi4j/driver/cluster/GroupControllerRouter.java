package io.csi4j.driver.cluster;

import static io.csi4j.driver.cluster.ControllerRouter.reply;

import io.csi4j.driver.id.ObjectId.Kind;
import io.csi4j.proto.csi.*;
import io.csi4j.proto.csi.GroupControllerServiceCapability.RPC.Type;
import io.csi4j.sdk.capability.Capabilities;
import io.grpc.stub.StreamObserver;

/**
 * csi.v1.GroupController of the cluster controller. A group snapshot whose members are all on one node is
 * that node's (write-order consistent there); members on several nodes are refused with FAILED_PRECONDITION
 * until the controller coordinates freeze-all / cut-all / thaw-all across agents.
 */
public final class GroupControllerRouter extends GroupControllerGrpc.GroupControllerImplBase {
    private final Owners owners;

    public GroupControllerRouter(Agents agents) {
        this.owners = new Owners(agents);
    }

    @Override
    public void groupControllerGetCapabilities(GroupControllerGetCapabilitiesRequest req,
                                               StreamObserver<GroupControllerGetCapabilitiesResponse> out) {
        reply(out, Capabilities.groupController(Type.CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT));
    }

    @Override
    public void createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest req, StreamObserver<CreateVolumeGroupSnapshotResponse> out) {
        Agent node = owners.common(Kind.VOLUME, req.getSourceVolumeIdsList(), "source volume", "volume group snapshot");
        reply(out, node.call(a -> a.groupController().createVolumeGroupSnapshot(req)));
    }

    @Override
    public void deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest req, StreamObserver<DeleteVolumeGroupSnapshotResponse> out) {
        reply(out, group(req.getGroupSnapshotId()).call(a -> a.groupController().deleteVolumeGroupSnapshot(req)));
    }

    @Override
    public void getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest req, StreamObserver<GetVolumeGroupSnapshotResponse> out) {
        reply(out, group(req.getGroupSnapshotId()).call(a -> a.groupController().getVolumeGroupSnapshot(req)));
    }

    private Agent group(String id) {
        return owners.of(Kind.GROUP_SNAPSHOT, id, "group snapshot");
    }
}
