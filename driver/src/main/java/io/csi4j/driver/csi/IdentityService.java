package io.csi4j.driver.csi;

import static io.csi4j.driver.csi.WireMapping.reply;

import com.google.protobuf.BoolValue;
import io.csi4j.proto.csi.*;
import io.csi4j.proto.csi.PluginCapability.Service.Type;
import io.grpc.stub.StreamObserver;
import java.util.Map;
import java.util.function.BooleanSupplier;

/** csi.v1.Identity: name, version, capabilities, and readiness (after the catalog is open and reconciled). */
public final class IdentityService extends IdentityGrpc.IdentityImplBase {
    private final String name;
    private final String version;
    private final Map<String, String> manifest;
    private final BooleanSupplier ready;
    private final BooleanSupplier snapshotMetadata;

    public IdentityService(String name, String version, Map<String, String> manifest, BooleanSupplier ready) {
        this(name, version, manifest, ready, false);
    }

    /** @param snapshotMetadata whether SnapshotMetadata is served (the image engine's snapshots are block images) */
    public IdentityService(String name, String version, Map<String, String> manifest, BooleanSupplier ready,
                           boolean snapshotMetadata) {
        this(name, version, manifest, ready, () -> snapshotMetadata);
    }

    /** @param snapshotMetadata asked at each GetPluginCapabilities (a cluster controller: whether its agents serve it) */
    public IdentityService(String name, String version, Map<String, String> manifest, BooleanSupplier ready,
                           BooleanSupplier snapshotMetadata) {
        this.name = name;
        this.version = version;
        this.manifest = Map.copyOf(manifest);
        this.ready = ready;
        this.snapshotMetadata = snapshotMetadata;
    }

    @Override
    public void getPluginInfo(GetPluginInfoRequest req, StreamObserver<GetPluginInfoResponse> out) {
        reply(out, GetPluginInfoResponse.newBuilder().setName(name).setVendorVersion(version).putAllManifest(manifest).build());
    }

    @Override
    public void getPluginCapabilities(GetPluginCapabilitiesRequest req, StreamObserver<GetPluginCapabilitiesResponse> out) {
        var response = GetPluginCapabilitiesResponse.newBuilder();
        // Every instance of a plugin version reports the same set, whichever services it serves (spec);
        // a node-only instance answers the controller RPCs with UNIMPLEMENTED.
        response.addCapabilities(service(Type.CONTROLLER_SERVICE));
        response.addCapabilities(service(Type.GROUP_CONTROLLER_SERVICE));
        response.addCapabilities(service(Type.VOLUME_ACCESSIBILITY_CONSTRAINTS));
        if (snapshotMetadata.getAsBoolean()) response.addCapabilities(service(Type.SNAPSHOT_METADATA_SERVICE));
        response.addCapabilities(PluginCapability.newBuilder().setVolumeExpansion(
                PluginCapability.VolumeExpansion.newBuilder().setType(PluginCapability.VolumeExpansion.Type.ONLINE)));
        reply(out, response.build());
    }

    @Override
    public void probe(ProbeRequest req, StreamObserver<ProbeResponse> out) {
        reply(out, ProbeResponse.newBuilder().setReady(BoolValue.of(ready.getAsBoolean())).build());
    }

    private static PluginCapability service(Type type) {
        return PluginCapability.newBuilder().setService(PluginCapability.Service.newBuilder().setType(type)).build();
    }
}
