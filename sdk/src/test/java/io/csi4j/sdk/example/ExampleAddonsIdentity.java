package io.csi4j.sdk.example;

import com.google.protobuf.BoolValue;
import io.csi4j.proto.addons.identity.Capability;
import io.csi4j.proto.addons.identity.GetCapabilitiesRequest;
import io.csi4j.proto.addons.identity.GetCapabilitiesResponse;
import io.csi4j.proto.addons.identity.GetIdentityRequest;
import io.csi4j.proto.addons.identity.GetIdentityResponse;
import io.csi4j.proto.addons.identity.IdentityGrpc;
import io.csi4j.proto.addons.identity.ProbeRequest;
import io.csi4j.proto.addons.identity.ProbeResponse;
import io.csi4j.sdk.capability.Capabilities;
import io.grpc.stub.StreamObserver;
import java.util.Set;

/** The CSI-Addons identity service of the example plugin, served on its second socket. */
public final class ExampleAddonsIdentity extends IdentityGrpc.IdentityImplBase {
    @Override
    public void getIdentity(GetIdentityRequest request, StreamObserver<GetIdentityResponse> response) {
        response.onNext(GetIdentityResponse.newBuilder().setName(ExampleIdentity.NAME).setVendorVersion("0.1.0").build());
        response.onCompleted();
    }

    @Override
    public void getCapabilities(GetCapabilitiesRequest request, StreamObserver<GetCapabilitiesResponse> response) {
        response.onNext(Capabilities.addons(Set.of(Capability.Service.Type.CONTROLLER_SERVICE), Set.of()));
        response.onCompleted();
    }

    @Override
    public void probe(ProbeRequest request, StreamObserver<ProbeResponse> response) {
        response.onNext(ProbeResponse.newBuilder().setReady(BoolValue.of(true)).build());
        response.onCompleted();
    }
}
