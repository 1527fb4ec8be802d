package io.csi4j.driver.cluster;

import static io.csi4j.driver.csi.WireMapping.reply;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.csi.ControllerService;
import io.csi4j.driver.id.ObjectId.Kind;
import io.csi4j.proto.csi.*;
import io.csi4j.sdk.capability.Capabilities;
import io.csi4j.sdk.paging.PageTokens;
import io.grpc.stub.StreamObserver;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.volume.ReplicationParameters;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import com.google.protobuf.Int64Value;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.proto.cluster.ImportVolumeRequest;
import io.csi4j.proto.cluster.PeerAgent;
import io.csi4j.sdk.CsiException;
import io.grpc.Status;

/** csi.v1.Controller of the cluster controller: every call goes to the node that owns it, lists are merged. */
public final class ControllerRouter extends ControllerGrpc.ControllerImplBase {
    private final Agents agents;
    private final Owners owners;
    private final Placement placement;
    private final ClusterPageToken tokens;
    private final Replicas replicas;
    private final PrimaryMoves moves;
    private final ReplicaSnapshotNames snapshotNames;

    public ControllerRouter(Agents agents, ClusterPageToken tokens, java.time.Duration failoverAfter) {
        this.agents = agents;
        this.owners = new Owners(agents);
        this.placement = new Placement(agents);
        this.tokens = tokens;
        this.replicas = new Replicas(agents, placement, failoverAfter);
        this.moves = new PrimaryMoves(agents, replicas, failoverAfter);
        this.snapshotNames = new ReplicaSnapshotNames(agents, replicas);
    }

    @Override
    public void createVolume(CreateVolumeRequest req, StreamObserver<CreateVolumeResponse> out) {
        // the agent fills accessible_topology with its own node: exactly where the volume is
        TransportThread.route(out, () -> {
            ReplicationParameters replication;
            try {
                replication = ReplicationParameters.of(req.getParametersMap());
                // before any node is asked: the interval of a VolumeAttributesClass named at creation, not the count
                ReplicationParameters.checkCreate(req.getParametersMap(), req.getMutableParametersMap());
            } catch (io.csi4j.driver.domain.DomainException bad) {          // only ever a bad value
                throw CsiException.invalidArgument(bad.getMessage());
            }
            if (replication.replicated()) {
                reply(out, CreateVolumeResponse.newBuilder().setVolume(replicas.create(req, replication.replicas())).build());
                return;
            }
            Placement.Route route = placement.forVolume(req);
            if (route.copyFrom() == null) {
                route.target().forward(ControllerGrpc.getCreateVolumeMethod(), req, out);
                return;
            }
            // a copy between nodes: the target agent pulls the data from the source's (call() waits, off the loop)
            Agent source = route.copyFrom();
            // the pull reads any snapshot by id (replication's pulls of points too): the source's node first answers
            // as to the CO, so a replication point's id is NOT_FOUND here as on that node (Lookup.coSnapshots)
            if (req.getVolumeContentSource().hasSnapshot()) source.call(a -> a.controller().getSnapshot(GetSnapshotRequest.newBuilder()
                    .setSnapshotId(req.getVolumeContentSource().getSnapshot().getSnapshotId()).build()));
            var copy = ImportVolumeRequest.newBuilder().setRequest(req)
                    .setSourceNode(PeerAgent.newBuilder().setNodeId(source.nodeId())
                            .setAddress(source.address()).setAuthority(source.authority()))
                    .build();
            reply(out, route.target().call(a -> a.nodeAgent().importVolume(copy)).getResponse());
        });
    }

    @Override
    public void deleteVolume(DeleteVolumeRequest req, StreamObserver<DeleteVolumeResponse> out) {
        TransportThread.route(out, () -> {
            var replicated = ReplicatedVolumeId.parse(req.getVolumeId());
            if (replicated.isEmpty()) {
                if (owners.onForgottenNode(Kind.VOLUME, req.getVolumeId())) reply(out, DeleteVolumeResponse.getDefaultInstance());
                else volume(req.getVolumeId()).forward(ControllerGrpc.getDeleteVolumeMethod(), req, out);
                return;
            }
            replicas.delete(replicated.get());
            reply(out, DeleteVolumeResponse.getDefaultInstance());
        });
    }

    @Override
    public void controllerPublishVolume(ControllerPublishVolumeRequest req, StreamObserver<ControllerPublishVolumeResponse> out) {
        TransportThread.route(out, () -> publish(req, out));
    }

    private void publish(ControllerPublishVolumeRequest req, StreamObserver<ControllerPublishVolumeResponse> out) {
        var replicated = ReplicatedVolumeId.parse(req.getVolumeId());
        if (replicated.isPresent()) {
            var id = replicated.get();
            if (!id.heldBy(req.getNodeId())) {
                throw CsiException.failedPrecondition("volume " + id + " has replicas on nodes " + id.tags()
                        + " only (its accessible_topology); it cannot be published to node '" + req.getNodeId() + "'");
            }
            Agent target = agents.byNodeTag(ObjectId.nodeTag(req.getNodeId())).orElseThrow(() ->
                    agents.unknownNode("volume " + id, req.getNodeId()));
            moves.handoffTo(id, target);          // the node becomes primary first, with no write lost
            target.forward(ControllerGrpc.getControllerPublishVolumeMethod(), req, out);
            return;
        }
        Agent owner = volume(req.getVolumeId());
        boolean ours = ObjectId.parse(Kind.VOLUME, req.getVolumeId()).isPresent();
        // a local volume is reachable from its own node only; its agent would not know the other node at all
        if (ours && !req.getNodeId().equals(owner.nodeId()) && agents.nodes().stream().anyMatch(a -> a.nodeId().equals(req.getNodeId()))) {
            throw CsiException.failedPrecondition("volume " + req.getVolumeId() + " lives on node '" + owner.nodeId()
                    + "' and is accessible from that node only (its accessible_topology); it cannot be published to node '"
                    + req.getNodeId() + "'");
        }
        owner.forward(ControllerGrpc.getControllerPublishVolumeMethod(), req, out);
    }

    @Override
    public void controllerUnpublishVolume(ControllerUnpublishVolumeRequest req, StreamObserver<ControllerUnpublishVolumeResponse> out) {
        TransportThread.route(out, () -> {
            var replicated = ReplicatedVolumeId.parse(req.getVolumeId());
            // a replicated volume's primary may be the silent node being unpublished: it fails over first
            Agent owner = replicated.isPresent() ? moves.unpublishing(replicated.get(), req.getNodeId()) : volume(req.getVolumeId());
            owner.forward(ControllerGrpc.getControllerUnpublishVolumeMethod(), req, out);
        });
    }

    @Override
    public void validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest req, StreamObserver<ValidateVolumeCapabilitiesResponse> out) {
        TransportThread.route(out, () -> volume(req.getVolumeId()).forward(ControllerGrpc.getValidateVolumeCapabilitiesMethod(), req, out));
    }

    @Override
    public void listVolumes(ListVolumesRequest req, StreamObserver<ListVolumesResponse> out) {
        agents.requireAllIdentified("ListVolumes");
        var page = MergedListing.page(tokens, "volumes", "", agents.nodes(), req.getStartingToken(), req.getMaxEntries(),
                (agent, token, max) -> {
                    var answer = agent.controller().listVolumes(req.toBuilder().setStartingToken(token).setMaxEntries(max).build());
                    var entries = answer.getEntriesList().stream()
                            .map(e -> e.toBuilder().setVolume(replicas.onEveryReplica(e.getVolume())).build()).toList();
                    return new MergedListing.Slice<>(entries, answer.getNextToken(), answer.getSerializedSize());
                });
        reply(out, ListVolumesResponse.newBuilder().addAllEntries(page.entries()).setNextToken(page.nextToken()).build());
    }

    @Override
    public void controllerGetVolume(ControllerGetVolumeRequest req, StreamObserver<ControllerGetVolumeResponse> out) {
        var replicated = ReplicatedVolumeId.parse(req.getVolumeId());
        if (replicated.isEmpty()) {
            TransportThread.route(out, () -> volume(req.getVolumeId()).forward(ControllerGrpc.getControllerGetVolumeMethod(), req, out));
            return;
        }
        // the primary knows its own node only; the volume is reachable on every replica's node
        TransportThread.route(out, () -> {
            var answer = replicas.primary(replicated.get()).call(a -> a.controller().controllerGetVolume(req));
            reply(out, answer.toBuilder().setVolume(replicas.onEveryReplica(answer.getVolume())).build());
        });
    }

    @Override
    public void controllerModifyVolume(ControllerModifyVolumeRequest req, StreamObserver<ControllerModifyVolumeResponse> out) {
        var replicated = ReplicatedVolumeId.parse(req.getVolumeId());
        if (replicated.isEmpty()) {
            TransportThread.route(out, () -> volume(req.getVolumeId()).forward(ControllerGrpc.getControllerModifyVolumeMethod(), req, out));
            return;
        }
        // every replica takes the change, so a secondary counts the new interval and a promoted one keeps it
        TransportThread.route(out, () -> reply(out, replicas.modify(replicated.get(), req)));
    }

    @Override
    public void controllerExpandVolume(ControllerExpandVolumeRequest req, StreamObserver<ControllerExpandVolumeResponse> out) {
        TransportThread.route(out, () -> volume(req.getVolumeId()).forward(ControllerGrpc.getControllerExpandVolumeMethod(), req, out));
    }

    /** For a node's segment: that node's answer (0 for a segment of no node); without one: the sum of all nodes. */
    @Override
    public void getCapacity(GetCapacityRequest req, StreamObserver<GetCapacityResponse> out) {
        TransportThread.route(out, () -> capacity(req, out));
    }

    private void capacity(GetCapacityRequest req, StreamObserver<GetCapacityResponse> out) {
        String segment = req.hasAccessibleTopology() ? req.getAccessibleTopology().getSegmentsMap().get(DriverConfig.TOPOLOGY_KEY) : null;
        if (segment != null) {
            Optional<Agent> node = agents.byTopologyValue(segment);
            if (node.isPresent()) node.get().forward(ControllerGrpc.getGetCapacityMethod(), req, out);
            else reply(out, GetCapacityResponse.getDefaultInstance());
            return;
        }
        agents.requireAllIdentified("GetCapacity of the whole cluster");
        Map<Agent, GetCapacityResponse> answers = Fanout.all(agents.nodes(), a -> a.controller().getCapacity(req.toBuilder()
                .setAccessibleTopology(Topology.newBuilder().putSegments(DriverConfig.TOPOLOGY_KEY, a.topologyValue())).build())).fromAll();
        long sum = 0;
        long maximum = 0;
        for (GetCapacityResponse answer : answers.values()) {
            sum += answer.getAvailableCapacity();
            if (answer.hasMaximumVolumeSize()) maximum = Math.max(maximum, answer.getMaximumVolumeSize().getValue());
        }
        var response = GetCapacityResponse.newBuilder().setAvailableCapacity(sum);
        if (maximum > 0) response.setMaximumVolumeSize(Int64Value.of(maximum));
        reply(out, response.build());
    }

    @Override
    public void controllerGetCapabilities(ControllerGetCapabilitiesRequest req, StreamObserver<ControllerGetCapabilitiesResponse> out) {
        reply(out, Capabilities.controller(ControllerService.CAPABILITIES));
    }

    @Override
    public void createSnapshot(CreateSnapshotRequest req, StreamObserver<CreateSnapshotResponse> out) {
        TransportThread.route(out, () -> snapshotSource(req).forward(ControllerGrpc.getCreateSnapshotMethod(), req, out));
    }

    /** A replicated source: the replica's node that holds that name already (a retry after a handoff), else the primary. */
    private Agent snapshotSource(CreateSnapshotRequest req) {
        var replicated = ReplicatedVolumeId.parse(req.getSourceVolumeId());
        return replicated.isPresent() ? snapshotNames.nodeFor(replicated.get(), req.getName()) : volume(req.getSourceVolumeId());
    }

    @Override
    public void deleteSnapshot(DeleteSnapshotRequest req, StreamObserver<DeleteSnapshotResponse> out) {
        TransportThread.route(out, () -> {
            if (owners.onForgottenNode(Kind.SNAPSHOT, req.getSnapshotId())) reply(out, DeleteSnapshotResponse.getDefaultInstance());
            else snapshot(req.getSnapshotId()).forward(ControllerGrpc.getDeleteSnapshotMethod(), req, out);
        });
    }

    @Override
    public void getSnapshot(GetSnapshotRequest req, StreamObserver<GetSnapshotResponse> out) {
        TransportThread.route(out, () -> snapshot(req.getSnapshotId()).forward(ControllerGrpc.getGetSnapshotMethod(), req, out));
    }

    /**
     * Filtered by snapshot or source volume: that one node (an id of no node matches nothing; a replicated source: the
     * nodes of its replicas, which keep the snapshots taken while each was primary); else every node.
     */
    @Override
    public void listSnapshots(ListSnapshotsRequest req, StreamObserver<ListSnapshotsResponse> out) {
        List<Agent> nodes;
        try {
            nodes = !req.getSnapshotId().isEmpty() ? List.of(snapshot(req.getSnapshotId()))
                    : !req.getSourceVolumeId().isEmpty() ? snapshotNodes(req.getSourceVolumeId())
                    : null;
        } catch (CsiException e) {
            if (e.code() != Status.Code.NOT_FOUND) throw e;
            reply(out, ListSnapshotsResponse.getDefaultInstance());  // the spec: no match is an empty list, not an error
            return;
        }
        if (nodes == null) {
            agents.requireAllIdentified("ListSnapshots");
            nodes = agents.nodes();
        }
        String filter = PageTokens.fingerprint(req.getSnapshotId(), req.getSourceVolumeId());
        var page = MergedListing.page(tokens, "snapshots", filter, nodes, req.getStartingToken(), req.getMaxEntries(),
                (agent, token, max) -> {
                    var answer = agent.controller().listSnapshots(req.toBuilder().setStartingToken(token).setMaxEntries(max).build());
                    return new MergedListing.Slice<>(answer.getEntriesList(), answer.getNextToken(), answer.getSerializedSize());
                });
        reply(out, ListSnapshotsResponse.newBuilder().addAllEntries(page.entries()).setNextToken(page.nextToken()).build());
    }

    /** The node that serves a volume: its own for an ordinary id, the current primary's for a replicated one. */
    private Agent volume(String id) {
        var replicated = ReplicatedVolumeId.parse(id);
        if (replicated.isPresent()) return replicas.primary(replicated.get());
        return owners.of(Kind.VOLUME, id, "volume");
    }

    /** The nodes that may hold snapshots of a source: its own, or every node of a replicated one's replicas. */
    private List<Agent> snapshotNodes(String sourceId) {
        var replicated = ReplicatedVolumeId.parse(sourceId);
        if (replicated.isEmpty()) return List.of(volume(sourceId));
        List<String> tags = replicated.get().tags();
        // a replica's node not known yet may be an agent not identified: then every node must be, or the list is partial
        if (tags.stream().anyMatch(tag -> agents.byNodeTag(tag).isEmpty())) agents.requireAllIdentified("ListSnapshots of " + sourceId);
        List<Agent> nodes = tags.stream().flatMap(tag -> agents.byNodeTag(tag).stream()).toList();
        if (nodes.isEmpty()) throw CsiException.notFound("volume " + sourceId + " does not exist");
        return nodes;
    }

    private Agent snapshot(String id) {
        return owners.of(Kind.SNAPSHOT, id, "snapshot");
    }
}
