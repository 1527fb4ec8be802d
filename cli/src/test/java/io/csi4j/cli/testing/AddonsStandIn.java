package io.csi4j.cli.testing;

import com.google.protobuf.BoolValue;
import io.csi4j.driver.Driver;
import io.csi4j.driver.catalog.VolumeRecord;
import io.csi4j.proto.addons.identity.*;
import io.csi4j.proto.addons.volumegroup.*;
import io.csi4j.proto.csi.Volume;
import io.csi4j.sdk.CsiException;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A small in-memory CSI-Addons identity and VolumeGroup service over the real driver's volumes, so the
 * cli's vg and addons commands are exercised over a real socket before the driver's own CSI-Addons
 * service (branch vg) is merged. Members must be real, ready volumes of the driver; groups live in
 * memory. Once the driver serves CSI-Addons, tests should use that instead.
 */
final class AddonsStandIn {
    private final Driver driver;
    private final Map<String, Group> groups = new LinkedHashMap<>();
    private final AtomicInteger ids = new AtomicInteger();

    private record Group(String id, String name, List<String> members) {}

    AddonsStandIn(Driver driver) {
        this.driver = driver;
    }

    io.csi4j.proto.addons.identity.IdentityGrpc.IdentityImplBase identity() {
        return new io.csi4j.proto.addons.identity.IdentityGrpc.IdentityImplBase() {
            @Override
            public void getIdentity(GetIdentityRequest req, StreamObserver<GetIdentityResponse> out) {
                reply(out, GetIdentityResponse.newBuilder().setName("local.csi4j.io").setVendorVersion(Driver.version())
                        .putManifest("stand-in", "cli tests").build());
            }

            @Override
            public void getCapabilities(GetCapabilitiesRequest req, StreamObserver<GetCapabilitiesResponse> out) {
                var r = GetCapabilitiesResponse.newBuilder();
                for (var t : List.of(Capability.VolumeGroup.Type.VOLUME_GROUP, Capability.VolumeGroup.Type.LIMIT_VOLUME_TO_ONE_VOLUME_GROUP,
                        Capability.VolumeGroup.Type.MODIFY_VOLUME_GROUP, Capability.VolumeGroup.Type.GET_VOLUME_GROUP,
                        Capability.VolumeGroup.Type.LIST_VOLUME_GROUPS)) {
                    r.addCapabilities(Capability.newBuilder().setVolumeGroup(Capability.VolumeGroup.newBuilder().setType(t)));
                }
                r.addCapabilities(Capability.newBuilder().setService(Capability.Service.newBuilder()
                        .setType(Capability.Service.Type.CONTROLLER_SERVICE)));
                reply(out, r.build());
            }

            @Override
            public void probe(ProbeRequest req, StreamObserver<ProbeResponse> out) {
                reply(out, ProbeResponse.newBuilder().setReady(BoolValue.of(driver.ready())).build());
            }
        };
    }

    ControllerGrpc.ControllerImplBase volumeGroups() {
        return new ControllerGrpc.ControllerImplBase() {
            @Override
            public void createVolumeGroup(CreateVolumeGroupRequest req, StreamObserver<CreateVolumeGroupResponse> out) {
                handle(out, () -> {
                    synchronized (groups) {
                        var existing = groups.values().stream().filter(g -> g.name().equals(req.getName())).findFirst();
                        if (existing.isPresent()) return CreateVolumeGroupResponse.newBuilder().setVolumeGroup(wire(existing.get())).build();
                        var g = new Group("vg-" + ids.incrementAndGet(), req.getName(), checked(req.getVolumeIdsList()));
                        groups.put(g.id(), g);
                        return CreateVolumeGroupResponse.newBuilder().setVolumeGroup(wire(g)).build();
                    }
                });
            }

            @Override
            public void modifyVolumeGroupMembership(ModifyVolumeGroupMembershipRequest req,
                                                    StreamObserver<ModifyVolumeGroupMembershipResponse> out) {
                handle(out, () -> {
                    synchronized (groups) {
                        var g = found(req.getVolumeGroupId());
                        var changed = new Group(g.id(), g.name(), checked(req.getVolumeIdsList()));
                        groups.put(g.id(), changed);
                        return ModifyVolumeGroupMembershipResponse.newBuilder().setVolumeGroup(wire(changed)).build();
                    }
                });
            }

            @Override
            public void deleteVolumeGroup(DeleteVolumeGroupRequest req, StreamObserver<DeleteVolumeGroupResponse> out) {
                handle(out, () -> {
                    synchronized (groups) {
                        groups.remove(req.getVolumeGroupId());
                    }
                    return DeleteVolumeGroupResponse.getDefaultInstance();
                });
            }

            @Override
            public void listVolumeGroups(ListVolumeGroupsRequest req, StreamObserver<ListVolumeGroupsResponse> out) {
                handle(out, () -> {
                    synchronized (groups) {
                        var all = new ArrayList<>(groups.values());
                        int from = req.getStartingToken().isEmpty() ? 0 : Integer.parseInt(req.getStartingToken());
                        int to = req.getMaxEntries() > 0 ? Math.min(all.size(), from + req.getMaxEntries()) : all.size();
                        var r = ListVolumeGroupsResponse.newBuilder();
                        for (Group g : all.subList(from, to)) r.addEntries(ListVolumeGroupsResponse.Entry.newBuilder().setVolumeGroup(wire(g)));
                        if (to < all.size()) r.setNextToken(Integer.toString(to));
                        return r.build();
                    }
                });
            }

            @Override
            public void controllerGetVolumeGroup(ControllerGetVolumeGroupRequest req, StreamObserver<ControllerGetVolumeGroupResponse> out) {
                handle(out, () -> {
                    synchronized (groups) {
                        return ControllerGetVolumeGroupResponse.newBuilder().setVolumeGroup(wire(found(req.getVolumeGroupId()))).build();
                    }
                });
            }
        };
    }

    private Group found(String id) {
        Group g = groups.get(id);
        if (g == null) throw CsiException.notFound("volume group " + id + " does not exist");
        return g;
    }

    private List<String> checked(List<String> volumeIds) {
        for (String id : volumeIds) driver.volumes().readyVolume(id, "volume");
        return List.copyOf(volumeIds);
    }

    private VolumeGroup wire(Group g) {
        var b = VolumeGroup.newBuilder().setVolumeGroupId(g.id()).putVolumeGroupContext("name", g.name());
        for (String id : g.members()) {
            VolumeRecord v = driver.volumes().readyVolume(id, "volume");
            b.addVolumes(Volume.newBuilder().setVolumeId(v.id()).setCapacityBytes(v.capacityBytes()));
        }
        return b.build();
    }

    private interface Call<T> {
        T get();
    }

    private static <T> void handle(StreamObserver<T> out, Call<T> call) {
        try {
            reply(out, call.get());
        } catch (CsiException e) {
            out.onError(e.toStatus().asRuntimeException());
        }
    }

    private static <T> void reply(StreamObserver<T> out, T value) {
        out.onNext(value);
        out.onCompleted();
    }
}
