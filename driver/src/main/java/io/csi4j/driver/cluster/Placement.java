package io.csi4j.driver.cluster;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.GetCapacityRequest;
import io.csi4j.proto.csi.Topology;
import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.sdk.CsiException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import io.csi4j.proto.cluster.FindVolumeRequest;
import java.time.Duration;
import java.util.HashMap;
import java.util.TreeMap;

/** Chooses the node a new volume (or an empty volume group) goes to. */
final class Placement {
    /** Placement asks every node; one that does not answer within this is passed over, not waited for. */
    static final Duration PROBE_TIMEOUT = Duration.ofSeconds(10);

    private final Agents agents;

    Placement(Agents agents) {
        this.agents = agents;
    }

    /** Where a new volume is made, and the other node its content comes from, if it lives on another (else null). */
    record Route(Agent target, Agent copyFrom) {}

    /**
     * A content source decides (a volume is made on its source's node) unless the requisite topology excludes that
     * node: then the volume goes where the topology says and its content is copied there from the source's node.
     * Without a source: the first preferred, then requisite, topology that names a node of the cluster; without
     * requirements, the node that already has a volume of that name, else the one with the most free capacity.
     */
    Route forVolume(CreateVolumeRequest req) {
        Optional<Agent> source = source(req);
        List<String> preferred = nodeValues(req.getAccessibilityRequirements().getPreferredList());
        List<String> requisite = nodeValues(req.getAccessibilityRequirements().getRequisiteList());
        if (source.isPresent() && (requisite.isEmpty() || requisite.contains(source.get().topologyValue()))) {
            return new Route(source.get(), null);
        }
        Set<String> candidates = new LinkedHashSet<>();
        preferred.stream().filter(v -> requisite.isEmpty() || requisite.contains(v)).forEach(candidates::add);
        candidates.addAll(requisite);
        for (String value : candidates) {
            Optional<Agent> node = agents.byTopologyValue(value);
            if (node.isPresent()) return new Route(node.get(), source.orElse(null));
        }
        if (!requisite.isEmpty()) {
            throw CsiException.resourceExhausted("no node of this cluster is in the requisite topology " + requisite
                    + " (nodes: " + agents.nodes().stream().map(Agent::topologyValue).toList() + ")");
        }
        return new Route(withName(req.getName()).orElseGet(() -> mostFreeCapacity(req.getVolumeCapabilitiesList(),
                req.getParametersMap())), null);
    }

    /**
     * The answering node that already holds a volume of this name: a retried CreateVolume goes back to it, not
     * to whichever node has the most room now. A silent node is not waited for (creating stays possible while
     * one node is down); a retry whose first attempt is on that very node could then make a second volume.
     */
    private Optional<Agent> withName(String name) {
        var answers = Fanout.all(agents.nodes(), a -> a.nodeAgent().withDeadlineAfter(PROBE_TIMEOUT)
                .findVolume(FindVolumeRequest.newBuilder().setName(name).build()).getVolumeId());
        return answers.results().entrySet().stream().filter(e -> !e.getValue().isEmpty()).map(Map.Entry::getKey).findFirst();
    }

    /** The answering node with the most available capacity; ties go to the first node id. */
    Agent mostFreeCapacity(List<VolumeCapability> capabilities, Map<String, String> parameters) {
        Map<String, Agent> agentOf = new HashMap<>();
        Map<String, Long> byNode = available(capabilities, parameters, agentOf);
        return agentOf.get(roomiest(byNode));
    }

    /** A replicated volume's secondaries (agents), besides {@code primary}: {@link #secondaries} on what the nodes answer. */
    List<Agent> secondaries(Agent primary, CreateVolumeRequest req, int replicas) {
        Map<String, Agent> agentOf = new HashMap<>();
        Map<String, Long> byNode = available(req.getVolumeCapabilitiesList(), withoutReplication(req.getParametersMap()), agentOf);
        return secondaries(primary.nodeId(), byNode, replicas).stream().map(agentOf::get).toList();
    }

    /** Capacity is asked as for an ordinary volume: a lone node refuses replicas (RESOURCE_EXHAUSTED) by design. */
    private static Map<String, String> withoutReplication(Map<String, String> parameters) {
        Map<String, String> plain = new HashMap<>(parameters);
        plain.remove(io.csi4j.driver.volume.ReplicationParameters.REPLICAS);
        plain.remove(io.csi4j.driver.volume.ReplicationParameters.INTERVAL);
        return plain;
    }

    /** Available bytes by node id of every answering node; {@code agentOf} is filled with their agents. */
    private Map<String, Long> available(List<VolumeCapability> capabilities, Map<String, String> parameters, Map<String, Agent> agentOf) {
        List<Agent> nodes = agents.nodes();
        if (nodes.isEmpty()) throw agents.unknownNode("placement", "any");
        var answers = Fanout.all(nodes, a -> a.controller().withDeadlineAfter(PROBE_TIMEOUT).getCapacity(GetCapacityRequest.newBuilder()
                .addAllVolumeCapabilities(capabilities).putAllParameters(parameters)
                .setAccessibleTopology(Topology.newBuilder().putSegments(DriverConfig.TOPOLOGY_KEY, a.topologyValue()))
                .build()).getAvailableCapacity());
        Map<String, Long> byNode = new TreeMap<>();
        answers.results().forEach((agent, available) -> { byNode.put(agent.nodeId(), available); agentOf.put(agent.nodeId(), agent); });
        if (byNode.isEmpty()) throw CsiException.unavailable("no node answers: " + String.join("; ", answers.silent()));
        return byNode;
    }

    /**
     * The node with the most available bytes; differences under 1% (at least 64 MiB) are noise (nodes that share a
     * disk measure it a moment apart), and a tie goes to the first node id, so the choice is stable.
     */
    static String roomiest(Map<String, Long> availableByNode) {
        long most = availableByNode.values().stream().mapToLong(Long::longValue).max().orElseThrow();
        long noise = Math.max(64L << 20, most / 100);
        return availableByNode.entrySet().stream().filter(e -> e.getValue() >= most - noise).map(Map.Entry::getKey)
                .min(Comparator.naturalOrder()).orElseThrow();
    }

    /**
     * The nodes a replicated volume's secondaries go to (issue 28, docs/replication.md): besides the primary's,
     * the roomiest of the answering nodes (the same noise rule as {@link #roomiest}, applied again to what is left),
     * in that order. RESOURCE_EXHAUSTED when fewer distinct nodes answer than replicas are asked: the set is fixed
     * at creation, so a volume is never made with fewer replicas than its StorageClass says.
     */
    static List<String> secondaries(String primary, Map<String, Long> availableByNode, int replicas) {
        Map<String, Long> left = new TreeMap<>(availableByNode);
        left.remove(primary);
        if (left.size() < replicas - 1) {
            throw CsiException.resourceExhausted(replicas + " replicas need " + replicas + " answering nodes; besides "
                    + primary + " only " + left.keySet() + " answered");
        }
        List<String> chosen = new ArrayList<>();
        while (chosen.size() < replicas - 1) {
            String next = roomiest(left);
            chosen.add(next);
            left.remove(next);
        }
        return chosen;
    }

    /** The node of the content source; NOT_FOUND for an id of ours naming no node; empty without a source. */
    private Optional<Agent> source(CreateVolumeRequest req) {
        if (!req.hasVolumeContentSource()) return Optional.empty();
        var source = req.getVolumeContentSource();
        if (source.hasSnapshot()) return owner(ObjectId.Kind.SNAPSHOT, source.getSnapshot().getSnapshotId(), "snapshot");
        if (source.hasVolume()) return owner(ObjectId.Kind.VOLUME, source.getVolume().getVolumeId(), "volume");
        return Optional.empty();
    }

    private Optional<Agent> owner(ObjectId.Kind kind, String id, String what) {
        // an id that is not ours exists nowhere: any node answers NOT_FOUND for it, as a single plugin does
        return Optional.of(ObjectId.parse(kind, id).map(parsed -> agents.owner(parsed, "source " + what))
                .orElseThrow(() -> CsiException.notFound("source " + what + " " + id + " does not exist")));
    }

    /** The values of topology.csi4j.io/node, in order; topologies without that key constrain nothing. */
    private static List<String> nodeValues(List<Topology> topologies) {
        List<String> values = new ArrayList<>();
        for (Topology t : topologies) {
            String value = t.getSegmentsMap().get(DriverConfig.TOPOLOGY_KEY);
            if (value != null && !values.contains(value)) values.add(value);
        }
        return values;
    }
}
