package io.csi4j.driver.cluster;

import static io.csi4j.driver.csi.WireMapping.reply;

import io.csi4j.driver.id.ObjectId.Kind;
import io.csi4j.proto.addons.volumegroup.*;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Map;
import io.csi4j.driver.group.VolumeGroups;
import io.csi4j.sdk.CsiException;
import java.util.Optional;

/**
 * CSI-Addons volumegroup.Controller of the cluster controller. A group lives on its members' node (one node
 * per group for now). An empty new group goes where a group of that name already is (so a retry answers the
 * same group), else to the node with the most free capacity.
 */
public final class VolumeGroupRouter extends ControllerGrpc.ControllerImplBase {
    private final Agents agents;
    private final Owners owners;
    private final Placement placement;
    private final ClusterPageToken tokens;

    public VolumeGroupRouter(Agents agents, ClusterPageToken tokens) {
        this.agents = agents;
        this.owners = new Owners(agents);
        this.placement = new Placement(agents);
        this.tokens = tokens;
    }

    @Override
    public void createVolumeGroup(CreateVolumeGroupRequest req, StreamObserver<CreateVolumeGroupResponse> out) {
        TransportThread.route(out, () -> create(req, out));
    }

    private void create(CreateVolumeGroupRequest req, StreamObserver<CreateVolumeGroupResponse> out) {
        Agent node = req.getVolumeIdsCount() > 0 ? owners.common(Kind.VOLUME, req.getVolumeIdsList(), "volume", "volume group")
                : withName(req.getName()).orElseGet(() -> placement.mostFreeCapacity(List.of(), Map.of()));
        node.forward(ControllerGrpc.getCreateVolumeGroupMethod(), req, out);
    }

    @Override
    public void modifyVolumeGroupMembership(ModifyVolumeGroupMembershipRequest req,
                                            StreamObserver<ModifyVolumeGroupMembershipResponse> out) {
        TransportThread.route(out, () -> modify(req, out));
    }

    private void modify(ModifyVolumeGroupMembershipRequest req, StreamObserver<ModifyVolumeGroupMembershipResponse> out) {
        Agent node = group(req.getVolumeGroupId());
        if (req.getVolumeIdsCount() > 0) {
            // ids not of our shape exist nowhere: the group's node answers NOT_FOUND for them
            Agent members = owners.common(Kind.VOLUME, req.getVolumeIdsList(), "volume", "volume group", node);
            if (members != node) {
                throw CsiException.failedPrecondition("volume group " + req.getVolumeGroupId() + " lives on node '"
                        + node.nodeId() + "', the volumes on node '" + members.nodeId() + "'; a group's members must be on its node");
            }
        }
        node.forward(ControllerGrpc.getModifyVolumeGroupMembershipMethod(), req, out);
    }

    @Override
    public void deleteVolumeGroup(DeleteVolumeGroupRequest req, StreamObserver<DeleteVolumeGroupResponse> out) {
        TransportThread.route(out, () -> group(req.getVolumeGroupId()).forward(ControllerGrpc.getDeleteVolumeGroupMethod(), req, out));
    }

    @Override
    public void controllerGetVolumeGroup(ControllerGetVolumeGroupRequest req, StreamObserver<ControllerGetVolumeGroupResponse> out) {
        TransportThread.route(out, () -> group(req.getVolumeGroupId()).forward(ControllerGrpc.getControllerGetVolumeGroupMethod(), req, out));
    }

    @Override
    public void listVolumeGroups(ListVolumeGroupsRequest req, StreamObserver<ListVolumeGroupsResponse> out) {
        agents.requireAllIdentified("ListVolumeGroups");
        var page = MergedListing.page(tokens, "volume-groups", "", agents.nodes(), req.getStartingToken(), req.getMaxEntries(),
                (agent, token, max) -> {
                    var answer = agent.volumeGroups().listVolumeGroups(req.toBuilder().setStartingToken(token).setMaxEntries(max).build());
                    return new MergedListing.Slice<>(answer.getEntriesList(), answer.getNextToken(), answer.getSerializedSize());
                });
        reply(out, ListVolumeGroupsResponse.newBuilder().addAllEntries(page.entries()).setNextToken(page.nextToken()).build());
    }

    /**
     * The node holding a group of this name (groups show their name in volume_group_context). Every node is
     * asked, page by page: only for an empty group's creation, which is rare, and without it a retry could make
     * a second group on another node.
     */
    private Optional<Agent> withName(String name) {
        agents.requireAllIdentified("CreateVolumeGroup without volumes (it looks for a group of that name on every node)");
        var found = Fanout.all(agents.nodes(), agent -> {
            String token = "";
            do {
                var page = agent.volumeGroups().listVolumeGroups(ListVolumeGroupsRequest.newBuilder().setStartingToken(token).build());
                for (var entry : page.getEntriesList()) {
                    if (name.equals(entry.getVolumeGroup().getVolumeGroupContextMap().get(VolumeGroups.CONTEXT_NAME))) {
                        return true;
                    }
                }
                token = page.getNextToken();
            } while (!token.isEmpty());
            return false;
        }).fromAll();
        return found.entrySet().stream().filter(Map.Entry::getValue).map(Map.Entry::getKey).findFirst();
    }

    private Agent group(String id) {
        return owners.of(Kind.VOLUME_GROUP, id, "volume group");
    }
}
