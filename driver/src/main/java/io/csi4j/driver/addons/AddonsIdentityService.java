package io.csi4j.driver.addons;

import com.google.protobuf.BoolValue;
import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.DriverConfig.GroupDeletePolicy;
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
import java.util.Collection;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * CSI-Addons identity.Identity on the addons socket: the same name and version as csi.v1 Identity, and the
 * capabilities of the CSI-Addons services served beside it (each service's entry in the driver's {@code Services} says
 * what it adds).
 */
public final class AddonsIdentityService extends IdentityGrpc.IdentityImplBase {
    private final String name;
    private final String version;
    private final Map<String, String> manifest;
    private final Supplier<GetCapabilitiesResponse> capabilities;
    private final BooleanSupplier ready;

    public AddonsIdentityService(String name, String version, Map<String, String> manifest,
                                 GetCapabilitiesResponse capabilities, BooleanSupplier ready) {
        this(name, version, manifest, () -> capabilities, ready);
    }

    /** @param capabilities asked at each GetCapabilities (a cluster controller: what its agents offer now) */
    public AddonsIdentityService(String name, String version, Map<String, String> manifest,
                                 Supplier<GetCapabilitiesResponse> capabilities, BooleanSupplier ready) {
        this.name = name;
        this.version = version;
        this.manifest = Map.copyOf(manifest);
        this.capabilities = capabilities;
        this.ready = ready;
    }

    /**
     * What the volume group service offers under {@code config}: in controller mode CONTROLLER_SERVICE and VOLUME_GROUP
     * with Modify, Get and List, plus LIMIT_VOLUME_TO_ONE_VOLUME_GROUP and DO_NOT_ALLOW_VG_TO_DELETE_VOLUMES when
     * configured so; nothing in node mode (volume groups are controller work).
     */
    public static List<Capability> volumeGroups(DriverConfig config) {
        var services = EnumSet.noneOf(Capability.Service.Type.class);
        var group = EnumSet.noneOf(Capability.VolumeGroup.Type.class);
        if (config.mode().controller()) {
            services.add(Capability.Service.Type.CONTROLLER_SERVICE);
            group.addAll(EnumSet.of(Capability.VolumeGroup.Type.VOLUME_GROUP, Capability.VolumeGroup.Type.MODIFY_VOLUME_GROUP,
                    Capability.VolumeGroup.Type.GET_VOLUME_GROUP, Capability.VolumeGroup.Type.LIST_VOLUME_GROUPS));
            if (config.oneGroupPerVolume()) group.add(Capability.VolumeGroup.Type.LIMIT_VOLUME_TO_ONE_VOLUME_GROUP);
            if (config.groupDeletePolicy() == GroupDeletePolicy.RETAIN_VOLUMES) {
                group.add(Capability.VolumeGroup.Type.DO_NOT_ALLOW_VG_TO_DELETE_VOLUMES);
            }
        }
        return Capabilities.addons(services, group).getCapabilitiesList();
    }

    /**
     * The capabilities of the services served, as GetCapabilities lists them: the service types first (each once, in
     * their order), then the others in the order given, each once.
     */
    public static GetCapabilitiesResponse listing(Collection<Capability> capabilities) {
        var services = new TreeMap<Integer, Capability>();
        var others = new LinkedHashSet<Capability>();
        for (Capability c : capabilities) {
            if (c.hasService()) services.putIfAbsent(c.getService().getTypeValue(), c);
            else others.add(c);
        }
        return GetCapabilitiesResponse.newBuilder().addAllCapabilities(services.values()).addAllCapabilities(others).build();
    }

    public static Capability service(Capability.Service.Type type) {
        return Capability.newBuilder().setService(Capability.Service.newBuilder().setType(type)).build();
    }

    public static Capability reclaimSpace(Capability.ReclaimSpace.Type type) {
        return Capability.newBuilder().setReclaimSpace(Capability.ReclaimSpace.newBuilder().setType(type)).build();
    }

    public static Capability volumeReplication(Capability.VolumeReplication.Type type) {
        return Capability.newBuilder().setVolumeReplication(Capability.VolumeReplication.newBuilder().setType(type)).build();
    }

    @Override
    public void getIdentity(GetIdentityRequest req, StreamObserver<GetIdentityResponse> out) {
        out.onNext(GetIdentityResponse.newBuilder().setName(name).setVendorVersion(version).putAllManifest(manifest).build());
        out.onCompleted();
    }

    @Override
    public void getCapabilities(GetCapabilitiesRequest req, StreamObserver<GetCapabilitiesResponse> out) {
        out.onNext(capabilities.get());
        out.onCompleted();
    }

    @Override
    public void probe(ProbeRequest req, StreamObserver<ProbeResponse> out) {
        out.onNext(ProbeResponse.newBuilder().setReady(BoolValue.of(ready.getAsBoolean())).build());
        out.onCompleted();
    }
}
