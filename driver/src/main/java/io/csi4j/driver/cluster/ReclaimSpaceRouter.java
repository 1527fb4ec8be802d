package io.csi4j.driver.cluster;

import io.csi4j.driver.id.ObjectId.Kind;
import io.csi4j.proto.addons.reclaimspace.ControllerReclaimSpaceRequest;
import io.csi4j.proto.addons.reclaimspace.ControllerReclaimSpaceResponse;
import io.csi4j.proto.addons.reclaimspace.ReclaimSpaceControllerGrpc;
import io.grpc.stub.StreamObserver;

/** CSI-Addons reclaimspace.ReclaimSpaceController of the cluster controller: the volume's node reclaims it offline. */
public final class ReclaimSpaceRouter extends ReclaimSpaceControllerGrpc.ReclaimSpaceControllerImplBase {
    private final Owners owners;

    public ReclaimSpaceRouter(Agents agents) {
        this.owners = new Owners(agents);
    }

    @Override
    public void controllerReclaimSpace(ControllerReclaimSpaceRequest req, StreamObserver<ControllerReclaimSpaceResponse> out) {
        TransportThread.route(out, () -> owners.of(Kind.VOLUME, req.getVolumeId(), "volume")
                .forward(ReclaimSpaceControllerGrpc.getControllerReclaimSpaceMethod(), req, out));
    }
}
