package io.csi4j.driver.cluster;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.CreateReplicaRequest;
import io.csi4j.proto.cluster.DeleteReplicaRequest;
import io.csi4j.proto.cluster.PeerAgent;
import io.csi4j.proto.cluster.SyncReplicaRequest;
import io.csi4j.proto.cluster.FenceReplicaRequest;
import io.csi4j.proto.cluster.FindVolumeRequest;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.Topology;
import io.csi4j.proto.csi.Volume;
import io.csi4j.sdk.CsiException;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;

/**
 * The controller's side of replicated volumes (issue 28, docs/replication.md): making, modifying and deleting every
 * replica, and routing: finding the current primary by asking the nodes the id names (fencing a superseded primary
 * that answers on the way). Moving the primary (handoff, failover) is {@link PrimaryMoves}. It keeps no state: the
 * agents' durable {@code ReplicaState}s are the truth.
 */
final class Replicas {
    private static final Logger LOG = Logger.getLogger(Replicas.class.getName());

    /** The default --failover-after: justified in docs/replication.md against Kubernetes' own timings. */
    static final java.time.Duration FAILOVER_AFTER = java.time.Duration.ofMinutes(2);

    private final Agents agents;
    private final Placement placement;
    private final java.time.Duration failoverAfter;

    Replicas(Agents agents, Placement placement, java.time.Duration failoverAfter) {
        this.agents = agents;
        this.placement = placement;
        this.failoverAfter = failoverAfter;
    }

    /**
     * The primary goes where an ordinary volume would (a retry by name finds the node that holds it; a content source:
     * the source's node, {@link #primaryNode}), the secondaries to the roomiest other nodes. Blank: secondaries'
     * records first, the primary's volume last. From a content source: the primary first (the node's own restore or
     * clone, with its capacity rules), then the secondaries blank at the primary's size; they get the data at their
     * first round, started at once ({@link #firstRound}). Any failure deletes what was made on every node, so a failed
     * create leaves nothing.
     */
    Volume create(CreateVolumeRequest req, int replicas) {
        boolean sourced = req.getVolumeContentSource().hasSnapshot() || req.getVolumeContentSource().hasVolume();
        var spread = new Placement.Spread(spreadKey(req));
        Place place = primaryNode(req, spread);
        Agent primary = place.primary();
        String existing = primary.call(a -> a.nodeAgent().findVolume(FindVolumeRequest.newBuilder().setName(req.getName()).build())).getVolumeId();
        List<Agent> nodes = new ArrayList<>();
        nodes.add(primary);
        ReplicatedVolumeId id;
        if (ReplicatedVolumeId.parse(existing).isPresent()) {
            id = ReplicatedVolumeId.parse(existing).get();          // a retry: the same replicas, whatever room says now
            for (String tag : id.tags().subList(1, id.tags().size())) nodes.add(node(tag, id));
        } else {
            // the requisite topology's node (alsoOn) is one of the replicas; all on distinct values of the spread key
            nodes.addAll(placement.secondaries(primary, place.alsoOn(), req, replicas, spread));
            id = ReplicatedVolumeId.generate(nodes.stream().map(Agent::nodeId).toList());
        }
        List<Agent> secondaries = nodes.subList(1, nodes.size());
        try {
            Volume made;
            if (sourced) {
                made = createOn(primary, req, id, true);
                // a secondary's image is replaced whole by its first round: blank, but as large as the primary's
                var blank = req.toBuilder().clearVolumeContentSource()
                        .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(made.getCapacityBytes())).build();
                for (Agent secondary : secondaries) createOn(secondary, blank, id, false);
            } else {
                for (Agent secondary : secondaries) createOn(secondary, req, id, false);
                made = createOn(primary, req, id, true);
            }
            var topology = Volume.newBuilder(made).clearAccessibleTopology();
            for (Agent node : nodes) {
                topology.addAccessibleTopology(Topology.newBuilder().putSegments(DriverConfig.TOPOLOGY_KEY, node.topologyValue()));
            }
            if (sourced) firstRound(id, primary, secondaries);
            return topology.build();
        } catch (RuntimeException failure) {
            if (!existing.isEmpty()) throw failure;            // a retry's failure leaves the first attempt as it was
            for (Agent node : nodes) {
                try {
                    node.call(a -> a.nodeAgent().deleteReplica(DeleteReplicaRequest.newBuilder().setVolumeId(id.toString()).build()));
                } catch (RuntimeException cleanup) {
                    LOG.warning(() -> "replicated volume " + id + ": rolling back on node '" + node.nodeId() + "' failed: " + cleanup);
                    failure.addSuppressed(cleanup);
                }
            }
            throw failure;
        }
    }

    /**
     * One node's replica. Without the accessibility requirements: the controller placed the replicas, and the volume is
     * accessible from every one of them, while a node checking a requisite topology of one node (Kubernetes'
     * --strict-topology names the pod's node only) would refuse to hold a secondary.
     */
    private static Volume createOn(Agent node, CreateVolumeRequest req, ReplicatedVolumeId id, boolean primary) {
        var placed = req.toBuilder().clearAccessibilityRequirements().build();
        return node.call(a -> a.nodeAgent().createReplica(CreateReplicaRequest.newBuilder().setRequest(placed)
                .setVolumeId(id.toString()).setPrimary(primary).build())).getVolume();
    }

    /** The primary's node, and a node the requisite topology asks for that must hold a secondary (or null). */
    private record Place(Agent primary, Agent alsoOn) {}

    /**
     * Where the primary goes: a replicated source volume's current primary (its data is that copy, routed as every
     * call); an ordinary snapshot or volume's own node; else as an ordinary volume. The data is made on the source's
     * node by reflink, never copied between nodes at create. A requisite topology that excludes that node (Kubernetes'
     * WaitForFirstConsumer with --strict-topology names the pod's node only) gets its node as a secondary instead: the
     * volume is accessible there (its first round starts at once, and ControllerPublishVolume there hands over), so the
     * spec's "accessible from at least one of the requisite topologies" holds.
     */
    /** The StorageClass's spread key (already checked by the router), or null. */
    private static String spreadKey(CreateVolumeRequest req) {
        return io.csi4j.driver.volume.ReplicationParameters.spreadKey(req.getParametersMap()).orElse(null);
    }

    private Place primaryNode(CreateVolumeRequest req, Placement.Spread spread) {
        var source = req.getVolumeContentSource();
        if (source.hasVolume()) {
            var replicated = ReplicatedVolumeId.parse(source.getVolume().getVolumeId());
            if (replicated.isPresent()) {
                Agent current = primary(replicated.get());
                List<String> requisite = req.getAccessibilityRequirements().getRequisiteList().stream()
                        .map(t -> t.getSegmentsMap().get(DriverConfig.TOPOLOGY_KEY)).filter(java.util.Objects::nonNull).toList();
                if (requisite.isEmpty() || requisite.contains(current.topologyValue())) return new Place(current, null);
                return new Place(current, placement.forVolume(req.toBuilder().clearVolumeContentSource().build(), spread).target());
            }
        }
        Placement.Route route = placement.forVolume(req, spread);
        return route.copyFrom() == null ? new Place(route.target(), null) : new Place(route.copyFrom(), route.target());
    }

    /**
     * A volume made from a content source holds data from its first moment: each secondary's first round (a full copy)
     * starts now, in the background, instead of one interval later when the scheduler would first find it due. The
     * answer does not wait for it; a round that fails is retried by the scheduler when due. Until a secondary holds a
     * point, a failover to it is refused (it holds no complete point), never a blank copy promoted over the data.
     */
    static void firstRound(ReplicatedVolumeId id, Agent primary, List<Agent> secondaries) {
        var from = PeerAgent.newBuilder().setNodeId(primary.nodeId()).setAddress(primary.address()).setAuthority(primary.authority()).build();
        for (Agent secondary : List.copyOf(secondaries)) {
            Thread.ofVirtual().name("csi4j-first-round-" + id).start(() -> {
                try {
                    var pulled = secondary.call(a -> a.nodeAgent().syncReplica(SyncReplicaRequest.newBuilder()
                            .setVolumeId(id.toString()).setPrimary(from).build()));
                    LOG.info(() -> "volume " + id + ": first round on node '" + secondary.nodeId() + "': " + pulled.getBytesReceived() + " bytes");
                } catch (RuntimeException failed) {
                    LOG.info(() -> "volume " + id + ": first round on node '" + secondary.nodeId() + "' failed (the scheduler retries): " + failed.getMessage());
                }
            });
        }
    }

    /**
     * Deletes every replica (docs/replication.md, "Deletion"). Every replica's node is asked first. When all answer:
     * the primary first (FAILED_PRECONDITION while published or staged, nothing deleted), then the rest. When some do
     * not, the delete goes on only if the silent ones cannot hold the primary: an answering node is primary at the
     * highest epoch answered (the evidence routing sends writes on), or an answering node holds a tombstone (an earlier
     * attempt of this delete got that far), or every silent node has said nothing for {@code --failover-after} (it is
     * gone as a failover counts it: the CO deletes only what it unpublished from every node, and an unpublish from a
     * silent primary fails it over first, {@link PrimaryMoves#unpublishing}); else UNAVAILABLE naming them, nothing deleted. Each answering node then
     * writes its tombstone before it deletes, and the controller's scheduler sweeps each silent node's leftover when it
     * answers again ({@link Sweep}).
     */
    void delete(ReplicatedVolumeId id) {
        var asked = ReplicaAnswers.ask(agents, id);
        List<Agent> silent = asked.silent();
        var primary = asked.primary();
        if (!silent.isEmpty() && primary.isEmpty() && !asked.tombstoned() && !silentAtLeast(silent, failoverAfter)) {
            throw CsiException.unavailable("volume " + id + ": nodes not answering may hold its primary, nothing deleted: "
                    + String.join("; ", asked.silentWhy()) + " (deleted without them once silent for " + failoverAfter.toSeconds() + "s)");
        }
        boolean tombstone = !silent.isEmpty();          // every node answering: nothing is left to sweep
        List<Agent> order = new ArrayList<>(asked.answers().keySet());
        primary.ifPresent(p -> {
            order.remove(p);
            order.addFirst(p);
        });
        for (Agent node : order) {
            node.call(a -> a.nodeAgent().deleteReplica(DeleteReplicaRequest.newBuilder().setVolumeId(id.toString())
                    .setTombstone(tombstone).build()));
        }
        if (!silent.isEmpty()) {
            LOG.info(() -> "volume " + id + " deleted; its replica on " + String.join(", ", silent.stream().map(Agent::nodeId).toList())
                    + " (not answering) is swept when that node answers again");
        }
    }

    /** Every one of these nodes has said nothing for at least {@code delay} (counted from its last answer). */
    private boolean silentAtLeast(List<Agent> silent, java.time.Duration delay) {
        return silent.stream().allMatch(n -> agents.liveness().silentFor(n.nodeId()).orElse(java.time.Duration.ZERO).compareTo(delay) >= 0);
    }

    /**
     * The node whose replica is primary at the highest epoch any replica's node answers. NOT_FOUND when no node holds
     * a replica; UNAVAILABLE when the primary may be behind a node that does not answer, and while a handoff runs (the
     * old primary stepped down, its successor not yet promoted: CreateSnapshot and the like are retried, never sent to
     * a copy that is not the primary of the highest epoch).
     */
    Agent primary(ReplicatedVolumeId id) {
        return primaryFrom(ReplicaAnswers.askKnown(agents, id));
    }

    /** {@link #primary} from the replicas' answers a caller has asked for already (unknown nodes: not carried by any agent). */
    Agent primaryFrom(ReplicaAnswers asked) {
        var id = asked.id();
        refuseDeleted(asked);
        var found = asked.primary();
        fenceSuperseded(asked);
        if (found.isPresent()) return found.get();
        asked.handingOver().ifPresent(successor -> {
            throw CsiException.unavailable("volume " + id + " is being handed over to node '" + successor
                    + "' (no primary until its final pull is done); retry");
        });
        List<String> missing = asked.unknown();
        if (!asked.silent().isEmpty() || (!missing.isEmpty() && !agents.unidentified().isEmpty())) {
            throw CsiException.unavailable("volume " + id + ": no answering node holds its primary; not answering: "
                    + String.join("; ", asked.silentWhy()) + (missing.isEmpty() ? "" : " unknown nodes: " + missing));
        }
        // its primary was on a node forgotten while this volume's other nodes were silent too (forget-node saw no copy
        // of it): a copy is here, so the volume exists; never NOT_FOUND, which a CO takes for gone (review s9, F2)
        List<String> forgotten = asked.forgotten();
        List<String> holding = asked.answers().entrySet().stream().filter(e -> e.getValue().getPresent())
                .map(e -> e.getKey().nodeId()).sorted().toList();
        if (!forgotten.isEmpty() && !holding.isEmpty()) {
            throw CsiException.unavailable("volume " + id + ": no answering node holds its primary, which was on forgotten node(s) "
                    + forgotten + "; copies on " + holding + ": ControllerPublishVolume on a node holding a copy fails over to it"
                    + " (docs/replication.md, \"A node lost for good\")");
        }
        throw CsiException.notFound("volume " + id + " does not exist");
    }

    /**
     * A tombstone on any node means the volume was deleted: NOT_FOUND, whatever a leftover copy not yet swept says
     * (a leftover primary must never be routed to, promoted or handed over).
     */
    static void refuseDeleted(ReplicaAnswers asked) {
        asked.answers().forEach((node, s) -> {
            if (s.getDeleted()) throw CsiException.notFound("volume " + asked.id() + " was deleted (tombstone on node '" + node.nodeId() + "')");
        });
    }

    /** Every answering copy that is primary below the highest epoch answered learns it, and fences itself (best effort). */
    void fenceSuperseded(ReplicaAnswers asked) {
        var id = asked.id();
        long top = asked.top();
        asked.answers().forEach((node, s) -> {
            if (s.getPresent() && s.getRole().equals("PRIMARY") && s.getEpoch() < top) {
                try {
                    node.call(a -> a.nodeAgent().fenceReplica(FenceReplicaRequest.newBuilder().setVolumeId(id.toString()).setEpoch(top).build()));
                    LOG.warning(() -> "volume " + id + ": the copy on node '" + node.nodeId() + "' (primary at epoch " + s.getEpoch()
                            + ") is fenced: epoch " + top + " exists");
                } catch (RuntimeException e) {
                    LOG.warning(() -> "volume " + id + ": fencing the copy on node '" + node.nodeId() + "' failed: " + e);
                }
            }
        });
    }

    /**
     * ControllerModifyVolume of a replicated volume (docs/replication.md, "Modify"): the primary first, which checks the
     * keys (INVALID_ARGUMENT before any node changed), then every other replica's node. Idempotent: a node that does not
     * answer makes it UNAVAILABLE and the CO's retry applies it to every node again.
     */
    io.csi4j.proto.csi.ControllerModifyVolumeResponse modify(ReplicatedVolumeId id, io.csi4j.proto.csi.ControllerModifyVolumeRequest req) {
        Agent primary = primary(id);
        var answer = primary.call(a -> a.controller().controllerModifyVolume(req));
        for (Agent node : nodes(id)) {
            if (node != primary) node.call(a -> a.controller().controllerModifyVolume(req));
        }
        return answer;
    }

    /** The agents of every node the id names; NOT_FOUND / UNAVAILABLE for a node the cluster does not know. */
    List<Agent> nodes(ReplicatedVolumeId id) {
        List<Agent> nodes = new ArrayList<>();
        for (String tag : id.tags()) {
            if (!gone(tag)) nodes.add(node(tag, id));
        }
        return nodes;
    }

    /**
     * A replica on a node declared permanently lost ({@link LostNodes}): gone, so never asked, routed to, handed over
     * to or failed over to. Sound because forget-node was refused while that node could hold the primary of a live
     * volume it could see ({@link LostNodes#withoutPrimary}; one it could not see, its other nodes silent too, fails
     * over from it, {@link PrimaryMoves#failoverTo}), and its agent is refused if it answers again.
     */
    private boolean gone(String tag) {
        return agents.forgottenNode(tag).isPresent();
    }

    /**
     * A volume as the CO must see it: a replicated one is reachable on every replica's node, as CreateVolume said
     * (the PV's node affinity); its primary answers with its own node only. Others, or a replica's node this
     * controller does not know, come back as they are.
     */
    Volume onEveryReplica(Volume volume) {
        var id = ReplicatedVolumeId.parse(volume.getVolumeId());
        if (id.isEmpty()) return volume;
        var withAll = volume.toBuilder().clearAccessibleTopology();
        for (String tag : id.get().tags()) {
            var node = agents.byNodeTag(tag);
            if (node.isEmpty()) return volume;
            withAll.addAccessibleTopology(Topology.newBuilder().putSegments(DriverConfig.TOPOLOGY_KEY, node.get().topologyValue()));
        }
        return withAll.build();
    }

    private Agent node(String tag, ReplicatedVolumeId id) {
        return agents.byNodeTag(tag).orElseThrow(() -> agents.unknownNode("volume " + id, tag));
    }
}
