package io.csi4j.driver.csi;

import static io.csi4j.driver.csi.WireMapping.reply;

import io.csi4j.driver.engine.VolumeStats;
import io.csi4j.driver.node.NodeVolumes;
import io.csi4j.proto.csi.*;
import io.csi4j.proto.csi.NodeServiceCapability.RPC.Type;
import io.csi4j.sdk.capability.Capabilities;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.util.Optional;
import io.csi4j.sdk.CsiException;
import java.nio.file.InvalidPathException;

/** csi.v1.Node: maps wire messages to {@link NodeVolumes} and back. */
public final class NodeService extends NodeGrpc.NodeImplBase {
    static final Type[] CAPABILITIES = {Type.STAGE_UNSTAGE_VOLUME, Type.GET_VOLUME_STATS, Type.EXPAND_VOLUME,
            Type.VOLUME_CONDITION, Type.SINGLE_NODE_MULTI_WRITER, Type.VOLUME_MOUNT_GROUP};

    private final NodeVolumes node;
    private final String nodeId;
    private final int maxVolumesPerNode;
    /** The node's own segment and its extra ones ({@code --topology}, e.g. a zone: what replicas spread over). */
    private final io.csi4j.proto.csi.Topology topology;

    public NodeService(NodeVolumes node, String nodeId, int maxVolumesPerNode, java.util.Map<String, String> extraTopology) {
        this.node = node;
        this.nodeId = nodeId;
        this.maxVolumesPerNode = maxVolumesPerNode;
        this.topology = WireMapping.topology(nodeId).toBuilder().putAllSegments(extraTopology).build();
    }

    @Override
    public void nodeStageVolume(NodeStageVolumeRequest req, StreamObserver<NodeStageVolumeResponse> out) {
        node.stage(req.getVolumeId(), path("staging_target_path", req.getStagingTargetPath()), WireMapping.capability(req.getVolumeCapability()));
        reply(out, NodeStageVolumeResponse.getDefaultInstance());
    }

    @Override
    public void nodeUnstageVolume(NodeUnstageVolumeRequest req, StreamObserver<NodeUnstageVolumeResponse> out) {
        node.unstage(req.getVolumeId(), path("staging_target_path", req.getStagingTargetPath()));
        reply(out, NodeUnstageVolumeResponse.getDefaultInstance());
    }

    @Override
    public void nodePublishVolume(NodePublishVolumeRequest req, StreamObserver<NodePublishVolumeResponse> out) {
        Optional<Path> staging = req.getStagingTargetPath().isEmpty() ? Optional.empty() : Optional.of(path("staging_target_path", req.getStagingTargetPath()));
        node.publish(req.getVolumeId(), staging, path("target_path", req.getTargetPath()),
                WireMapping.capability(req.getVolumeCapability()), req.getReadonly(), req.getVolumeContextMap());
        reply(out, NodePublishVolumeResponse.getDefaultInstance());
    }

    @Override
    public void nodeUnpublishVolume(NodeUnpublishVolumeRequest req, StreamObserver<NodeUnpublishVolumeResponse> out) {
        node.unpublish(req.getVolumeId(), path("target_path", req.getTargetPath()));
        reply(out, NodeUnpublishVolumeResponse.getDefaultInstance());
    }

    @Override
    public void nodeGetVolumeStats(NodeGetVolumeStatsRequest req, StreamObserver<NodeGetVolumeStatsResponse> out) {
        VolumeStats s = node.stats(req.getVolumeId(), path("volume_path", req.getVolumePath()));
        var response = NodeGetVolumeStatsResponse.newBuilder();
        if (s.usedBytes() < 0) {
            response.addUsage(VolumeUsage.newBuilder().setUnit(VolumeUsage.Unit.BYTES).setTotal(s.totalBytes()));
        } else {
            response.addUsage(VolumeUsage.newBuilder().setUnit(VolumeUsage.Unit.BYTES)
                    .setTotal(s.totalBytes()).setUsed(s.usedBytes()).setAvailable(s.availableBytes()));
            response.addUsage(VolumeUsage.newBuilder().setUnit(VolumeUsage.Unit.INODES)
                    .setTotal(s.totalInodes()).setUsed(s.usedInodes()).setAvailable(s.availableInodes()));
        }
        response.setVolumeCondition(VolumeCondition.newBuilder()
                .setAbnormal(s.abnormal().isPresent()).setMessage(s.abnormal().orElse("healthy")));
        reply(out, response.build());
    }

    @Override
    public void nodeExpandVolume(NodeExpandVolumeRequest req, StreamObserver<NodeExpandVolumeResponse> out) {
        long size = node.expand(req.getVolumeId(), path("volume_path", req.getVolumePath()),
                WireMapping.range(req.hasCapacityRange(), req.getCapacityRange()),
                req.hasVolumeCapability() ? Optional.of(WireMapping.capability(req.getVolumeCapability())) : Optional.empty());
        reply(out, NodeExpandVolumeResponse.newBuilder().setCapacityBytes(size).build());
    }

    @Override
    public void nodeGetCapabilities(NodeGetCapabilitiesRequest req, StreamObserver<NodeGetCapabilitiesResponse> out) {
        reply(out, Capabilities.node(CAPABILITIES));
    }

    @Override
    public void nodeGetInfo(NodeGetInfoRequest req, StreamObserver<NodeGetInfoResponse> out) {
        reply(out, NodeGetInfoResponse.newBuilder()
                .setNodeId(nodeId)
                .setMaxVolumesPerNode(maxVolumesPerNode)
                .setAccessibleTopology(topology)
                .build());
    }

    /** A path from the wire; one the JDK cannot represent (a NUL byte) is the caller's error, not ours. */
    private static Path path(String field, String value) {
        try {
            return Path.of(value);
        } catch (InvalidPathException e) {
            throw CsiException.invalidArgument(field + " is not a valid path: " + e.getReason());
        }
    }
}
