package io.csi4j.driver.addons;

import static io.csi4j.driver.csi.WireMapping.reply;

import io.csi4j.driver.csi.WireMapping;
import io.csi4j.driver.group.VolumeGroups;
import io.csi4j.driver.group.VolumeGroups.Group;
import io.csi4j.driver.model.Page;
import io.csi4j.driver.model.VolumeRecord;
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
import io.csi4j.sdk.CsiException;
import io.csi4j.sdk.paging.PageTokens;
import io.grpc.stub.StreamObserver;

/** CSI-Addons volumegroup.Controller: maps wire messages to {@link VolumeGroups} and back. */
public final class VolumeGroupService extends ControllerGrpc.ControllerImplBase {
    static final String LIST_KIND = "volume-groups";
    static final int MAX_PAGE = 1000;

    private final VolumeGroups groups;
    private final PageTokens tokens;

    public VolumeGroupService(VolumeGroups groups, PageTokens tokens) {
        this.groups = groups;
        this.tokens = tokens;
    }

    @Override
    public void createVolumeGroup(CreateVolumeGroupRequest req, StreamObserver<CreateVolumeGroupResponse> out) {
        Group g = groups.create(req.getName(), req.getParametersMap(), req.getVolumeIdsList());
        reply(out, CreateVolumeGroupResponse.newBuilder().setVolumeGroup(wire(g)).build());
    }

    @Override
    public void modifyVolumeGroupMembership(ModifyVolumeGroupMembershipRequest req,
                                            StreamObserver<ModifyVolumeGroupMembershipResponse> out) {
        Group g = groups.modify(req.getVolumeGroupId(), req.getVolumeIdsList(), req.getParametersMap());
        reply(out, ModifyVolumeGroupMembershipResponse.newBuilder().setVolumeGroup(wire(g)).build());
    }

    @Override
    public void deleteVolumeGroup(DeleteVolumeGroupRequest req, StreamObserver<DeleteVolumeGroupResponse> out) {
        groups.delete(req.getVolumeGroupId());
        reply(out, DeleteVolumeGroupResponse.getDefaultInstance());
    }

    @Override
    public void controllerGetVolumeGroup(ControllerGetVolumeGroupRequest req, StreamObserver<ControllerGetVolumeGroupResponse> out) {
        reply(out, ControllerGetVolumeGroupResponse.newBuilder().setVolumeGroup(wire(groups.get(req.getVolumeGroupId()))).build());
    }

    @Override
    public void listVolumeGroups(ListVolumeGroupsRequest req, StreamObserver<ListVolumeGroupsResponse> out) {
        if (req.getMaxEntries() < 0) throw CsiException.invalidArgument("max_entries must not be negative");
        int limit = req.getMaxEntries() == 0 ? MAX_PAGE : Math.min(req.getMaxEntries(), MAX_PAGE);
        long after = tokens.decode(LIST_KIND, "", req.getStartingToken());
        Page<Group> page = groups.list(after, limit);
        var response = ListVolumeGroupsResponse.newBuilder();
        for (Group g : page.items()) response.addEntries(ListVolumeGroupsResponse.Entry.newBuilder().setVolumeGroup(wire(g)));
        if (page.more()) response.setNextToken(tokens.encode(LIST_KIND, "", page.lastSeq()));
        reply(out, response.build());
    }

    /** Members as full csi.v1.Volume, exactly as ControllerGetVolume shows them. */
    static VolumeGroup wire(Group g) {
        var b = VolumeGroup.newBuilder()
                .setVolumeGroupId(g.id())
                .putVolumeGroupContext(VolumeGroups.CONTEXT_NAME, g.record().name());
        for (VolumeRecord v : g.members()) b.addVolumes(WireMapping.volume(v));
        return b.build();
    }
}
