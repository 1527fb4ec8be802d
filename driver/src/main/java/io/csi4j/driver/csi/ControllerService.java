package io.csi4j.driver.csi;

import static io.csi4j.driver.csi.WireMapping.reply;
import static io.csi4j.driver.csi.WireMapping.require;

import io.csi4j.driver.model.ListedVolume;
import io.csi4j.driver.model.Page;
import io.csi4j.driver.model.SnapshotFilter;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.model.VolumeStatus;
import io.csi4j.driver.snapshot.Snapshots;
import io.csi4j.driver.volume.Volumes;
import io.csi4j.proto.csi.*;
import io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type;
import io.csi4j.sdk.capability.Capabilities;
import io.csi4j.sdk.paging.PageTokens;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Optional;
import com.google.protobuf.Int64Value;
import io.csi4j.driver.DriverConfig;

/** csi.v1.Controller: maps wire messages to the parts of {@link Volumes} / {@link Snapshots} and back. */
public final class ControllerService extends ControllerGrpc.ControllerImplBase {
    /** Also what the cluster controller advertises: it routes every one of these to the owning node. */
    public static final Type[] CAPABILITIES = {
            Type.CREATE_DELETE_VOLUME, Type.PUBLISH_UNPUBLISH_VOLUME, Type.LIST_VOLUMES,
            Type.LIST_VOLUMES_PUBLISHED_NODES, Type.GET_CAPACITY, Type.CREATE_DELETE_SNAPSHOT, Type.LIST_SNAPSHOTS,
            Type.GET_SNAPSHOT, Type.CLONE_VOLUME, Type.EXPAND_VOLUME, Type.GET_VOLUME, Type.VOLUME_CONDITION,
            Type.SINGLE_NODE_MULTI_WRITER, Type.MODIFY_VOLUME, Type.PUBLISH_READONLY};

    private final Volumes volumes;
    private final Snapshots snapshots;
    private final PageTokens tokens;
    private final String nodeId;

    public ControllerService(Volumes volumes, Snapshots snapshots, PageTokens tokens, String nodeId) {
        this.volumes = volumes;
        this.snapshots = snapshots;
        this.tokens = tokens;
        this.nodeId = nodeId;
    }

    @Override
    public void createVolume(CreateVolumeRequest req, StreamObserver<CreateVolumeResponse> out) {
        VolumeRecord v = volumes.creation().create(WireMapping.newVolume(req));
        reply(out, CreateVolumeResponse.newBuilder().setVolume(WireMapping.volume(v)).build());
    }

    @Override
    public void deleteVolume(DeleteVolumeRequest req, StreamObserver<DeleteVolumeResponse> out) {
        volumes.deletion().delete(req.getVolumeId());
        reply(out, DeleteVolumeResponse.getDefaultInstance());
    }

    @Override
    public void controllerPublishVolume(ControllerPublishVolumeRequest req, StreamObserver<ControllerPublishVolumeResponse> out) {
        var context = volumes.publications().publish(req.getVolumeId(), req.getNodeId(),
                WireMapping.capability(req.getVolumeCapability()), req.getReadonly());
        reply(out, ControllerPublishVolumeResponse.newBuilder().putAllPublishContext(context).build());
    }

    @Override
    public void controllerUnpublishVolume(ControllerUnpublishVolumeRequest req, StreamObserver<ControllerUnpublishVolumeResponse> out) {
        volumes.publications().unpublish(req.getVolumeId(), req.getNodeId());
        reply(out, ControllerUnpublishVolumeResponse.getDefaultInstance());
    }

    @Override
    public void validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest req, StreamObserver<ValidateVolumeCapabilitiesResponse> out) {
        var capabilities = WireMapping.capabilities(req.getVolumeCapabilitiesList());   // a bad one before the volume is read
        VolumeRecord v = volumes.reads().readyVolume(req.getVolumeId(), "volume");
        Optional<String> why = volumes.rules().unconfirmed(v, capabilities,
                req.getParametersMap(), req.getMutableParametersMap(), req.getVolumeContextMap());
        var response = ValidateVolumeCapabilitiesResponse.newBuilder();
        if (why.isPresent()) {
            response.setMessage(why.get());
        } else {
            response.setConfirmed(ValidateVolumeCapabilitiesResponse.Confirmed.newBuilder()
                    .putAllVolumeContext(req.getVolumeContextMap())
                    .addAllVolumeCapabilities(req.getVolumeCapabilitiesList())
                    .putAllParameters(req.getParametersMap())
                    .putAllMutableParameters(req.getMutableParametersMap()));
        }
        reply(out, response.build());
    }

    /** Under gRPC's default 4 MiB limit on what a client accepts: a page of big entries is cut shorter. */
    static final int PAGE_BYTES = 3 << 20;

    @Override
    public void listVolumes(ListVolumesRequest req, StreamObserver<ListVolumesResponse> out) {
        int limit = WireMapping.maxEntries(req.getMaxEntries());
        long after = tokens.decode("volumes", "", req.getStartingToken());
        ListVolumesResponse response = volumePage(after, limit);
        while (response.getSerializedSize() > PAGE_BYTES && limit > 1) {
            limit /= 2;  // rare: entries with big parameter maps
            response = volumePage(after, limit);
        }
        reply(out, response);
    }

    private ListVolumesResponse volumePage(long after, int limit) {
        Page<ListedVolume> page = volumes.reads().listReady(after, limit);
        var response = ListVolumesResponse.newBuilder();
        for (ListedVolume v : page.items()) {
            response.addEntries(ListVolumesResponse.Entry.newBuilder()
                    .setVolume(WireMapping.volume(v.volume()))
                    .setStatus(ListVolumesResponse.VolumeStatus.newBuilder()
                            .addAllPublishedNodeIds(v.status().publishedNodeIds())
                            .setVolumeCondition(condition(v.status()))));
        }
        if (page.more()) response.setNextToken(tokens.encode("volumes", "", page.lastSeq()));
        return response.build();
    }

    @Override
    public void controllerGetVolume(ControllerGetVolumeRequest req, StreamObserver<ControllerGetVolumeResponse> out) {
        VolumeRecord v = volumes.reads().readyVolume(req.getVolumeId(), "volume");
        VolumeStatus status = volumes.reads().status(v.id());
        reply(out, ControllerGetVolumeResponse.newBuilder()
                .setVolume(WireMapping.volume(v))
                .setStatus(ControllerGetVolumeResponse.VolumeStatus.newBuilder()
                        .addAllPublishedNodeIds(status.publishedNodeIds())
                        .setVolumeCondition(condition(status)))
                .build());
    }

    @Override
    public void controllerModifyVolume(ControllerModifyVolumeRequest req, StreamObserver<ControllerModifyVolumeResponse> out) {
        volumes.changes().modify(req.getVolumeId(), req.getMutableParametersMap());
        reply(out, ControllerModifyVolumeResponse.getDefaultInstance());
    }

    @Override
    public void getCapacity(GetCapacityRequest req, StreamObserver<GetCapacityResponse> out) {
        var response = GetCapacityResponse.newBuilder();
        String topologyValue = DriverConfig.topologyValue(nodeId);
        String node = req.hasAccessibleTopology()
                ? req.getAccessibleTopology().getSegmentsMap().getOrDefault(DriverConfig.TOPOLOGY_KEY, topologyValue)
                : topologyValue;
        if (node.equals(topologyValue)) {
            response.setAvailableCapacity(volumes.reads().availableCapacity(WireMapping.capabilities(req.getVolumeCapabilitiesList())))
                    .setMaximumVolumeSize(Int64Value.of(volumes.reads().maximumVolumeSize()));
        }
        reply(out, response.build());
    }

    @Override
    public void controllerGetCapabilities(ControllerGetCapabilitiesRequest req, StreamObserver<ControllerGetCapabilitiesResponse> out) {
        reply(out, Capabilities.controller(CAPABILITIES));
    }

    @Override
    public void createSnapshot(CreateSnapshotRequest req, StreamObserver<CreateSnapshotResponse> out) {
        SnapshotRecord s = snapshots.create(req.getName(), require(req.getSourceVolumeId(), "source_volume_id"),
                req.getParametersMap());
        reply(out, CreateSnapshotResponse.newBuilder().setSnapshot(WireMapping.snapshot(s)).build());
    }

    @Override
    public void deleteSnapshot(DeleteSnapshotRequest req, StreamObserver<DeleteSnapshotResponse> out) {
        snapshots.delete(req.getSnapshotId());
        reply(out, DeleteSnapshotResponse.getDefaultInstance());
    }

    @Override
    public void listSnapshots(ListSnapshotsRequest req, StreamObserver<ListSnapshotsResponse> out) {
        int limit = WireMapping.maxEntries(req.getMaxEntries());
        String id = req.getSnapshotId().isEmpty() ? null : req.getSnapshotId();
        String source = req.getSourceVolumeId().isEmpty() ? null : req.getSourceVolumeId();
        String filter = PageTokens.fingerprint(req.getSnapshotId(), req.getSourceVolumeId());
        long after = tokens.decode("snapshots", filter, req.getStartingToken());
        Page<SnapshotRecord> page = snapshots.listReady(after, limit, new SnapshotFilter(id, source));
        var response = ListSnapshotsResponse.newBuilder();
        for (SnapshotRecord s : page.items()) {
            response.addEntries(ListSnapshotsResponse.Entry.newBuilder().setSnapshot(WireMapping.snapshot(s)));
        }
        if (page.more()) response.setNextToken(tokens.encode("snapshots", filter, page.lastSeq()));
        reply(out, response.build());
    }

    @Override
    public void getSnapshot(GetSnapshotRequest req, StreamObserver<GetSnapshotResponse> out) {
        SnapshotRecord s = snapshots.get(req.getSnapshotId());
        reply(out, GetSnapshotResponse.newBuilder().setSnapshot(WireMapping.snapshot(s)).build());
    }

    @Override
    public void controllerExpandVolume(ControllerExpandVolumeRequest req, StreamObserver<ControllerExpandVolumeResponse> out) {
        var result = volumes.changes().expand(req.getVolumeId(), WireMapping.range(req.hasCapacityRange(), req.getCapacityRange()),
                req.hasVolumeCapability() ? Optional.of(WireMapping.capability(req.getVolumeCapability())) : Optional.empty());
        reply(out, ControllerExpandVolumeResponse.newBuilder()
                .setCapacityBytes(result.capacityBytes())
                .setNodeExpansionRequired(result.nodeExpansionRequired())
                .build());
    }

    /** One message for every healthy volume: a page of 10,000 builds it, and sizes it, once. */
    private static final VolumeCondition HEALTHY = VolumeCondition.newBuilder().setAbnormal(false).setMessage("healthy").build();

    private static VolumeCondition condition(VolumeStatus status) {
        return status.abnormal().map(m -> VolumeCondition.newBuilder().setAbnormal(true).setMessage(m).build()).orElse(HEALTHY);
    }
}
