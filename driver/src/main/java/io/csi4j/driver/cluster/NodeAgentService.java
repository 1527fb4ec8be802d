package io.csi4j.driver.cluster;

import io.csi4j.driver.catalog.Catalog;
import io.csi4j.proto.cluster.FindVolumeRequest;
import io.csi4j.proto.cluster.FindVolumeResponse;
import io.csi4j.proto.cluster.NodeAgentGrpc;
import io.grpc.stub.StreamObserver;

/** The agent's side of csi4j.cluster.v1.NodeAgent: lookups the controller needs that CSI has no call for. */
public final class NodeAgentService extends NodeAgentGrpc.NodeAgentImplBase {
    private final Catalog catalog;

    public NodeAgentService(Catalog catalog) {
        this.catalog = catalog;
    }

    @Override
    public void findVolume(FindVolumeRequest req, StreamObserver<FindVolumeResponse> out) {
        // any row counts, also one a crash left half made: CreateVolume on this node finishes or answers it
        String id = req.getName().isEmpty() ? "" : catalog.volumes().byName(req.getName()).map(v -> v.id()).orElse("");
        out.onNext(FindVolumeResponse.newBuilder().setVolumeId(id).build());
        out.onCompleted();
    }
}
