package io.csi4j.driver.addons;

import io.csi4j.driver.node.NodeVolumes;
import io.csi4j.proto.addons.reclaimspace.NodeReclaimSpaceRequest;
import io.csi4j.proto.addons.reclaimspace.NodeReclaimSpaceResponse;
import io.csi4j.proto.addons.reclaimspace.ReclaimSpaceNodeGrpc;
import io.csi4j.proto.addons.reclaimspace.StorageConsumption;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import io.csi4j.driver.volume.SpaceUsage;

/**
 * CSI-Addons reclaimspace.ReclaimSpaceNode: FITRIM of a staged or published filesystem volume. pre_usage and
 * post_usage are the bytes its image really takes in the pool (allocated blocks), before and after.
 */
public final class ReclaimSpaceNodeService extends ReclaimSpaceNodeGrpc.ReclaimSpaceNodeImplBase {
    private final NodeVolumes node;

    public ReclaimSpaceNodeService(NodeVolumes node) {
        this.node = node;
    }

    @Override
    public void nodeReclaimSpace(NodeReclaimSpaceRequest req, StreamObserver<NodeReclaimSpaceResponse> out) {
        SpaceUsage usage = node.reclaimSpace(req.getVolumeId(), Path.of(req.getVolumePath()));
        out.onNext(NodeReclaimSpaceResponse.newBuilder()
                .setPreUsage(StorageConsumption.newBuilder().setUsageBytes(usage.before()))
                .setPostUsage(StorageConsumption.newBuilder().setUsageBytes(usage.after())).build());
        out.onCompleted();
    }
}
