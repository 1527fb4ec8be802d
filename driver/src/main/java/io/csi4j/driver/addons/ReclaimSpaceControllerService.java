package io.csi4j.driver.addons;

import io.csi4j.driver.volume.OfflineReclaim;
import io.csi4j.driver.volume.SpaceUsage;
import io.csi4j.proto.addons.reclaimspace.ControllerReclaimSpaceRequest;
import io.csi4j.proto.addons.reclaimspace.ControllerReclaimSpaceResponse;
import io.csi4j.proto.addons.reclaimspace.ReclaimSpaceControllerGrpc;
import io.csi4j.proto.addons.reclaimspace.StorageConsumption;
import io.csi4j.sdk.CsiException;
import io.grpc.stub.StreamObserver;

/** CSI-Addons reclaimspace.ReclaimSpaceController: an offline reclaim of a filesystem volume nobody stages. */
public final class ReclaimSpaceControllerService extends ReclaimSpaceControllerGrpc.ReclaimSpaceControllerImplBase {
    private final OfflineReclaim reclaim;

    public ReclaimSpaceControllerService(OfflineReclaim reclaim) {
        this.reclaim = reclaim;
    }

    @Override
    public void controllerReclaimSpace(ControllerReclaimSpaceRequest req, StreamObserver<ControllerReclaimSpaceResponse> out) {
        if (!req.getParametersMap().isEmpty()) {
            throw CsiException.invalidArgument("unknown parameters " + req.getParametersMap().keySet() + "; this driver takes none");
        }
        SpaceUsage usage = reclaim.reclaim(req.getVolumeId());
        out.onNext(ControllerReclaimSpaceResponse.newBuilder()
                .setPreUsage(StorageConsumption.newBuilder().setUsageBytes(usage.before()))
                .setPostUsage(StorageConsumption.newBuilder().setUsageBytes(usage.after())).build());
        out.onCompleted();
    }
}
