package io.csi4j.testkit.reference;

import static io.csi4j.testkit.reference.Rpc.require;

import io.csi4j.proto.csi.CreateVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeGroupSnapshotResponse;
import io.csi4j.proto.csi.DeleteVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.DeleteVolumeGroupSnapshotResponse;
import io.csi4j.proto.csi.GetVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.GetVolumeGroupSnapshotResponse;
import io.csi4j.proto.csi.GroupControllerGetCapabilitiesRequest;
import io.csi4j.proto.csi.GroupControllerGetCapabilitiesResponse;
import io.csi4j.proto.csi.GroupControllerGrpc;
import io.csi4j.proto.csi.GroupControllerServiceCapability;
import io.csi4j.proto.csi.VolumeGroupSnapshot;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;

final class ReferenceGroupController extends GroupControllerGrpc.GroupControllerImplBase {
    private final Store store;
    private final ReferenceController controller;

    ReferenceGroupController(Store store, ReferenceController controller) {
        this.store = store;
        this.controller = controller;
    }

    @Override
    public void groupControllerGetCapabilities(GroupControllerGetCapabilitiesRequest request, StreamObserver<GroupControllerGetCapabilitiesResponse> o) {
        Rpc.answer(o, () -> GroupControllerGetCapabilitiesResponse.newBuilder().addCapabilities(GroupControllerServiceCapability.newBuilder()
                .setRpc(GroupControllerServiceCapability.RPC.newBuilder().setType(GroupControllerServiceCapability.RPC.Type.CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT))).build());
    }

    private VolumeGroupSnapshot message(Store.GroupSnapshotRecord g) {
        var b = VolumeGroupSnapshot.newBuilder().setGroupSnapshotId(g.id()).setCreationTime(g.created()).setReadyToUse(true);
        for (String id : g.snapshotIds()) b.addSnapshots(ReferenceController.snapshot(store.snapshots.get(id)));
        return b.build();
    }

    @Override
    public void createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest r, StreamObserver<CreateVolumeGroupSnapshotResponse> o) {
        Rpc.answer(o, () -> {
            Rpc.checkName(r.getName(), "name");
            require(r.getSourceVolumeIdsCount() > 0, "source_volume_ids");
            synchronized (store) {
                for (String id : r.getSourceVolumeIdsList()) if (!store.volumes.containsKey(id)) throw Rpc.notFound("volume " + id);
                if (store.options.groupSnapshotsOnlyUnpublished()
                        && r.getSourceVolumeIdsList().stream().anyMatch(id -> store.volumes.get(id).live() != store.volumes.get(id).data)) {
                    throw Rpc.failedPrecondition("cannot snapshot volumes together while one is published writable");
                }
                Store.GroupSnapshotRecord existing = store.groupSnapshots.values().stream().filter(g -> g.name().equals(r.getName())).findFirst().orElse(null);
                if (existing != null) {
                    if (!new HashSet<>(existing.sourceVolumeIds()).equals(new HashSet<>(r.getSourceVolumeIdsList()))) {
                        throw Rpc.alreadyExists("group snapshot " + r.getName() + " has other source volumes");
                    }
                    return CreateVolumeGroupSnapshotResponse.newBuilder().setGroupSnapshot(message(existing)).build();
                }
                String id = store.nextId("group-snap");
                List<String> snapshotIds = new ArrayList<>();
                for (String volumeId : r.getSourceVolumeIdsList()) {
                    Store.SnapshotRecord s = controller.cut(store.volumes.get(volumeId), r.getName() + "/" + volumeId);
                    s.groupSnapshotId = id;
                    snapshotIds.add(s.id);
                }
                Store.GroupSnapshotRecord g = new Store.GroupSnapshotRecord(id, r.getName(), List.copyOf(r.getSourceVolumeIdsList()), snapshotIds, Store.now());
                store.groupSnapshots.put(id, g);
                return CreateVolumeGroupSnapshotResponse.newBuilder().setGroupSnapshot(message(g)).build();
            }
        });
    }

    /** A given snapshot_ids must be the group's members; an empty one (proto3: the same as absent) is not needed here. */
    private static void checkList(Store.GroupSnapshotRecord g, List<String> snapshotIds) {
        if (snapshotIds.isEmpty()) return;
        if (!new HashSet<>(g.snapshotIds()).equals(new HashSet<>(snapshotIds))) throw Rpc.invalid("snapshot_ids do not match group snapshot " + g.id());
    }

    @Override
    public void getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest r, StreamObserver<GetVolumeGroupSnapshotResponse> o) {
        Rpc.answer(o, () -> {
            require(!r.getGroupSnapshotId().isEmpty(), "group_snapshot_id");
            if (store.flawed(Flaw.REFUSES_EMPTY_REQUIRED_LISTS)) require(r.getSnapshotIdsCount() > 0, "snapshot_ids");
            synchronized (store) {
                Store.GroupSnapshotRecord g = store.groupSnapshots.get(r.getGroupSnapshotId());
                if (g == null) throw Rpc.notFound("group snapshot " + r.getGroupSnapshotId());
                checkList(g, r.getSnapshotIdsList());
                return GetVolumeGroupSnapshotResponse.newBuilder().setGroupSnapshot(message(g)).build();
            }
        });
    }

    @Override
    public void deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest r, StreamObserver<DeleteVolumeGroupSnapshotResponse> o) {
        Rpc.answer(o, () -> {
            require(!r.getGroupSnapshotId().isEmpty(), "group_snapshot_id");
            if (store.flawed(Flaw.REFUSES_EMPTY_REQUIRED_LISTS)) require(r.getSnapshotIdsCount() > 0, "snapshot_ids");
            synchronized (store) {
                Store.GroupSnapshotRecord g = store.groupSnapshots.get(r.getGroupSnapshotId());
                if (g == null) return DeleteVolumeGroupSnapshotResponse.getDefaultInstance();
                checkList(g, r.getSnapshotIdsList());
                for (String id : g.snapshotIds()) {
                    Store.SnapshotRecord s = store.snapshots.remove(id);
                    if (s != null && s.data != null) Data.delete(s.data);
                }
                store.groupSnapshots.remove(g.id());
            }
            return DeleteVolumeGroupSnapshotResponse.getDefaultInstance();
        });
    }
}
