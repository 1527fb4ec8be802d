package io.csi4j.sdk.example;

import com.google.protobuf.BoolValue;
import io.csi4j.proto.csi.GetPluginCapabilitiesRequest;
import io.csi4j.proto.csi.GetPluginCapabilitiesResponse;
import io.csi4j.proto.csi.GetPluginInfoRequest;
import io.csi4j.proto.csi.GetPluginInfoResponse;
import io.csi4j.proto.csi.IdentityGrpc;
import io.csi4j.proto.csi.PluginCapability;
import io.csi4j.proto.csi.ProbeRequest;
import io.csi4j.proto.csi.ProbeResponse;
import io.csi4j.sdk.capability.Capabilities;
import io.grpc.stub.StreamObserver;

/** The Identity service of the example plugin. */
public final class ExampleIdentity extends IdentityGrpc.IdentityImplBase {
    public static final String NAME = "example.csi4j.io";

    @Override
    public void getPluginInfo(GetPluginInfoRequest request, StreamObserver<GetPluginInfoResponse> response) {
        response.onNext(GetPluginInfoResponse.newBuilder().setName(NAME).setVendorVersion("0.1.0").build());
        response.onCompleted();
    }

    @Override
    public void getPluginCapabilities(GetPluginCapabilitiesRequest request, StreamObserver<GetPluginCapabilitiesResponse> response) {
        response.onNext(Capabilities.plugin(PluginCapability.Service.Type.CONTROLLER_SERVICE));
        response.onCompleted();
    }

    @Override
    public void probe(ProbeRequest request, StreamObserver<ProbeResponse> response) {
        response.onNext(ProbeResponse.newBuilder().setReady(BoolValue.of(true)).build());
        response.onCompleted();
    }
}
