package io.csi4j.driver.csi;

import static io.csi4j.driver.csi.WireMapping.groupSnapshot;
import static io.csi4j.driver.csi.WireMapping.reply;

import io.csi4j.driver.snapshot.GroupSnapshots;
import io.csi4j.proto.csi.*;
import io.csi4j.proto.csi.GroupControllerServiceCapability.RPC.Type;
import io.csi4j.sdk.capability.Capabilities;
import io.grpc.stub.StreamObserver;

/** csi.v1.GroupController: write-order consistent group snapshots through {@link GroupSnapshots}. */
public final class GroupControllerService extends GroupControllerGrpc.GroupControllerImplBase {
    private final GroupSnapshots groupSnapshots;

    public GroupControllerService(GroupSnapshots groupSnapshots) {
        this.groupSnapshots = groupSnapshots;
    }

    @Override
    public void groupControllerGetCapabilities(GroupControllerGetCapabilitiesRequest req,
                                               StreamObserver<GroupControllerGetCapabilitiesResponse> out) {
        reply(out, Capabilities.groupController(Type.CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT));
    }

    @Override
    public void createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest req, StreamObserver<CreateVolumeGroupSnapshotResponse> out) {
        var g = groupSnapshots.create(req.getName(), req.getSourceVolumeIdsList(), req.getParametersMap());
        reply(out, CreateVolumeGroupSnapshotResponse.newBuilder().setGroupSnapshot(groupSnapshot(g)).build());
    }

    @Override
    public void deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest req, StreamObserver<DeleteVolumeGroupSnapshotResponse> out) {
        groupSnapshots.delete(req.getGroupSnapshotId(), req.getSnapshotIdsList());
        reply(out, DeleteVolumeGroupSnapshotResponse.getDefaultInstance());
    }

    @Override
    public void getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest req, StreamObserver<GetVolumeGroupSnapshotResponse> out) {
        var g = groupSnapshots.get(req.getGroupSnapshotId(), req.getSnapshotIdsList());
        reply(out, GetVolumeGroupSnapshotResponse.newBuilder().setGroupSnapshot(groupSnapshot(g)).build());
    }
}
