package io.csi4j.testkit.reference;

import com.google.protobuf.BoolValue;
import io.csi4j.proto.csi.GetPluginCapabilitiesRequest;
import io.csi4j.proto.csi.GetPluginCapabilitiesResponse;
import io.csi4j.proto.csi.GetPluginInfoRequest;
import io.csi4j.proto.csi.GetPluginInfoResponse;
import io.csi4j.proto.csi.IdentityGrpc;
import io.csi4j.proto.csi.PluginCapability;
import io.csi4j.proto.csi.ProbeRequest;
import io.csi4j.proto.csi.ProbeResponse;
import io.grpc.stub.StreamObserver;

final class ReferenceIdentity extends IdentityGrpc.IdentityImplBase {
    static final String NAME = "reference.csi4j.io";

    private final Store store;

    ReferenceIdentity(Store store) {
        this.store = store;
    }

    @Override
    public void getPluginInfo(GetPluginInfoRequest request, StreamObserver<GetPluginInfoResponse> o) {
        Rpc.answer(o, () -> GetPluginInfoResponse.newBuilder().setName(NAME).setVendorVersion("0.0.1-test").build());
    }

    @Override
    public void getPluginCapabilities(GetPluginCapabilitiesRequest request, StreamObserver<GetPluginCapabilitiesResponse> o) {
        var b = GetPluginCapabilitiesResponse.newBuilder().addCapabilities(service(PluginCapability.Service.Type.CONTROLLER_SERVICE));
        if (store.options.groupSnapshots()) b.addCapabilities(service(PluginCapability.Service.Type.GROUP_CONTROLLER_SERVICE));
        if (store.options.topology()) b.addCapabilities(service(PluginCapability.Service.Type.VOLUME_ACCESSIBILITY_CONSTRAINTS));
        if (store.options.snapshotMetadata()) b.addCapabilities(service(PluginCapability.Service.Type.SNAPSHOT_METADATA_SERVICE));
        if (store.options.expand()) {
            b.addCapabilities(PluginCapability.newBuilder().setVolumeExpansion(
                    PluginCapability.VolumeExpansion.newBuilder().setType(PluginCapability.VolumeExpansion.Type.ONLINE)));
        }
        Rpc.answer(o, b::build);
    }

    private static PluginCapability service(PluginCapability.Service.Type type) {
        return PluginCapability.newBuilder().setService(PluginCapability.Service.newBuilder().setType(type)).build();
    }

    @Override
    public void probe(ProbeRequest request, StreamObserver<ProbeResponse> o) {
        Rpc.answer(o, () -> ProbeResponse.newBuilder().setReady(BoolValue.of(true)).build());
    }
}
