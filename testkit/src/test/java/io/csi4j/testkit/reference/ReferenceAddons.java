package io.csi4j.testkit.reference;

import static io.csi4j.testkit.reference.Rpc.require;

import com.google.protobuf.BoolValue;
import io.csi4j.proto.addons.identity.Capability;
import io.csi4j.proto.addons.identity.GetCapabilitiesRequest;
import io.csi4j.proto.addons.identity.GetCapabilitiesResponse;
import io.csi4j.proto.addons.identity.GetIdentityRequest;
import io.csi4j.proto.addons.identity.GetIdentityResponse;
import io.csi4j.proto.addons.identity.IdentityGrpc;
import io.csi4j.proto.addons.identity.ProbeRequest;
import io.csi4j.proto.addons.identity.ProbeResponse;
import io.csi4j.proto.addons.volumegroup.ControllerGetVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.ControllerGetVolumeGroupResponse;
import io.csi4j.proto.addons.volumegroup.ControllerGrpc;
import io.csi4j.proto.addons.volumegroup.CreateVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.CreateVolumeGroupResponse;
import io.csi4j.proto.addons.volumegroup.DeleteVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.DeleteVolumeGroupResponse;
import io.csi4j.proto.addons.volumegroup.ListVolumeGroupsRequest;
import io.csi4j.proto.addons.volumegroup.ListVolumeGroupsResponse;
import io.csi4j.proto.addons.volumegroup.ModifyVolumeGroupMembershipRequest;
import io.csi4j.proto.addons.volumegroup.ModifyVolumeGroupMembershipResponse;
import io.csi4j.proto.addons.volumegroup.VolumeGroup;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** The CSI-Addons services of the reference plugin, served on their own socket. */
final class ReferenceAddons {
    private ReferenceAddons() {}

    static final class Identity extends IdentityGrpc.IdentityImplBase {
        private final Store store;

        Identity(Store store) {
            this.store = store;
        }

        @Override
        public void getIdentity(GetIdentityRequest request, StreamObserver<GetIdentityResponse> o) {
            Rpc.answer(o, () -> GetIdentityResponse.newBuilder().setName(ReferenceIdentity.NAME).setVendorVersion("0.0.1-test").build());
        }

        @Override
        public void getCapabilities(GetCapabilitiesRequest request, StreamObserver<GetCapabilitiesResponse> o) {
            List<Capability.VolumeGroup.Type> types = new ArrayList<>(List.of(Capability.VolumeGroup.Type.VOLUME_GROUP,
                    Capability.VolumeGroup.Type.LIMIT_VOLUME_TO_ONE_VOLUME_GROUP, Capability.VolumeGroup.Type.MODIFY_VOLUME_GROUP,
                    Capability.VolumeGroup.Type.GET_VOLUME_GROUP, Capability.VolumeGroup.Type.LIST_VOLUME_GROUPS));
            if (store.options.doNotAllowGroupToDeleteVolumes()) types.add(Capability.VolumeGroup.Type.DO_NOT_ALLOW_VG_TO_DELETE_VOLUMES);
            var b = GetCapabilitiesResponse.newBuilder().addCapabilities(Capability.newBuilder()
                    .setService(Capability.Service.newBuilder().setType(Capability.Service.Type.CONTROLLER_SERVICE)));
            for (var t : types) b.addCapabilities(Capability.newBuilder().setVolumeGroup(Capability.VolumeGroup.newBuilder().setType(t)));
            Rpc.answer(o, b::build);
        }

        @Override
        public void probe(ProbeRequest request, StreamObserver<ProbeResponse> o) {
            Rpc.answer(o, () -> ProbeResponse.newBuilder().setReady(BoolValue.of(true)).build());
        }
    }

    static final class Groups extends ControllerGrpc.ControllerImplBase {
        private final Store store;

        Groups(Store store) {
            this.store = store;
        }

        private VolumeGroup message(Store.VolumeGroupRecord g) {
            var b = VolumeGroup.newBuilder().setVolumeGroupId(g.id);
            for (String id : g.volumeIds) b.addVolumes(ReferenceController.volume(store.volumes.get(id)));
            return b.build();
        }

        /** Checks that every volume exists and belongs to no other group. Caller holds the store. */
        private void checkJoinable(String groupId, List<String> volumeIds) {
            for (String id : volumeIds) {
                Store.VolumeRecord v = store.volumes.get(id);
                if (v == null) throw Rpc.notFound("volume " + id);
                if (v.group != null && !v.group.equals(groupId)) throw Rpc.failedPrecondition("volume " + id + " is in volume group " + v.group);
            }
        }

        @Override
        public void createVolumeGroup(CreateVolumeGroupRequest r, StreamObserver<CreateVolumeGroupResponse> o) {
            Rpc.answer(o, () -> {
                Rpc.checkName(r.getName(), "name");
                synchronized (store) {
                    Store.VolumeGroupRecord existing = store.volumeGroups.values().stream().filter(g -> g.name.equals(r.getName())).findFirst().orElse(null);
                    if (existing != null) {
                        if (!existing.parameters.equals(r.getParametersMap())) throw Rpc.alreadyExists("volume group " + r.getName() + " has other parameters");
                        if (!existing.volumeIds.equals(new LinkedHashSet<>(r.getVolumeIdsList()))) {
                            throw Rpc.alreadyExists("volume group " + r.getName() + " has other volumes");
                        }
                        return CreateVolumeGroupResponse.newBuilder().setVolumeGroup(message(existing)).build();
                    }
                    checkJoinable(null, r.getVolumeIdsList());
                    Store.VolumeGroupRecord g = new Store.VolumeGroupRecord(store.nextId("group"), r.getName(), r.getParametersMap());
                    for (String id : r.getVolumeIdsList()) {
                        g.volumeIds.add(id);
                        store.volumes.get(id).group = g.id;
                    }
                    store.volumeGroups.put(g.id, g);
                    return CreateVolumeGroupResponse.newBuilder().setVolumeGroup(message(g)).build();
                }
            });
        }

        @Override
        public void modifyVolumeGroupMembership(ModifyVolumeGroupMembershipRequest r, StreamObserver<ModifyVolumeGroupMembershipResponse> o) {
            Rpc.answer(o, () -> {
                require(!r.getVolumeGroupId().isEmpty(), "volume_group_id");
                synchronized (store) {
                    Store.VolumeGroupRecord g = store.volumeGroups.get(r.getVolumeGroupId());
                    if (g == null) throw Rpc.notFound("volume group " + r.getVolumeGroupId());
                    checkJoinable(g.id, r.getVolumeIdsList());
                    Set<String> wanted = new LinkedHashSet<>(r.getVolumeIdsList());
                    for (String id : List.copyOf(g.volumeIds)) {
                        if (wanted.contains(id)) continue;
                        g.volumeIds.remove(id);
                        Store.VolumeRecord v = store.volumes.get(id);
                        if (v != null) v.group = null;
                    }
                    for (String id : wanted) {
                        g.volumeIds.add(id);
                        store.volumes.get(id).group = g.id;
                    }
                    return ModifyVolumeGroupMembershipResponse.newBuilder().setVolumeGroup(message(g)).build();
                }
            });
        }

        @Override
        public void deleteVolumeGroup(DeleteVolumeGroupRequest r, StreamObserver<DeleteVolumeGroupResponse> o) {
            Rpc.answer(o, () -> {
                require(!r.getVolumeGroupId().isEmpty(), "volume_group_id");
                synchronized (store) {
                    Store.VolumeGroupRecord g = store.volumeGroups.get(r.getVolumeGroupId());
                    if (g == null) return DeleteVolumeGroupResponse.getDefaultInstance();
                    if (!g.volumeIds.isEmpty() && store.options.doNotAllowGroupToDeleteVolumes()) {
                        throw Rpc.failedPrecondition("volume group " + g.id + " still has volumes");
                    }
                    for (String id : g.volumeIds) {
                        Store.VolumeRecord v = store.volumes.get(id);
                        if (v != null && v.inUse()) throw Rpc.failedPrecondition("volume " + id + " of the group is in use");
                    }
                    for (String id : g.volumeIds) {
                        Store.VolumeRecord v = store.volumes.remove(id);
                        if (v != null) Data.delete(v.data);
                    }
                    store.volumeGroups.remove(g.id);
                }
                return DeleteVolumeGroupResponse.getDefaultInstance();
            });
        }

        @Override
        public void controllerGetVolumeGroup(ControllerGetVolumeGroupRequest r, StreamObserver<ControllerGetVolumeGroupResponse> o) {
            Rpc.answer(o, () -> {
                require(!r.getVolumeGroupId().isEmpty(), "volume_group_id");
                synchronized (store) {
                    Store.VolumeGroupRecord g = store.volumeGroups.get(r.getVolumeGroupId());
                    if (g == null) throw Rpc.notFound("volume group " + r.getVolumeGroupId());
                    return ControllerGetVolumeGroupResponse.newBuilder().setVolumeGroup(message(g)).build();
                }
            });
        }

        @Override
        public void listVolumeGroups(ListVolumeGroupsRequest r, StreamObserver<ListVolumeGroupsResponse> o) {
            Rpc.answer(o, () -> {
                synchronized (store) {
                    var page = store.page(store.volumeGroups, r.getMaxEntries(), r.getStartingToken(),
                            g -> ListVolumeGroupsResponse.Entry.newBuilder().setVolumeGroup(message(g)).build());
                    return ListVolumeGroupsResponse.newBuilder().addAllEntries(page.entries()).setNextToken(page.nextToken()).build();
                }
            });
        }
    }
}
