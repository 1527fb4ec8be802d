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
        return forVolume(req, Spread.NONE);
    }

    /** As {@link #forVolume(CreateVolumeRequest)}, on the nodes {@code spread} allows only (a node with a value of its key). */
    Route forVolume(CreateVolumeRequest req, Spread spread) {
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
            Optional<Agent> node = agents.byTopologyValue(value).filter(spread::allows);
            if (node.isPresent()) return new Route(node.get(), source.orElse(null));
        }
        if (!requisite.isEmpty()) {
            throw CsiException.resourceExhausted("no node of this cluster is in the requisite topology " + requisite
                    + spread.describe() + " (nodes: " + agents.nodes().stream().map(Agent::topologyValue).toList() + ")");
        }
        return new Route(withName(req.getName()).orElseGet(() -> mostFreeCapacity(req.getVolumeCapabilitiesList(),
                req.getParametersMap(), spread)), null);
    }

    /**
     * A replicated volume's spread rule ({@code csi4j.io/replica-spread-key}): every replica on a node with a different
     * value of {@code key}, a node without the key holding none. {@link #NONE}: any node, each node its own value.
     */
    record Spread(String key) {
        static final Spread NONE = new Spread(null);

        /** The node's value of the key (its node value for {@link DriverConfig#TOPOLOGY_KEY}); null when it lacks it. */
        String valueOf(Agent node) {
            if (key == null) return node.nodeId();
            return key.equals(DriverConfig.TOPOLOGY_KEY) ? node.topologyValue() : node.segments().get(key);
        }

        boolean allows(Agent node) {
            return valueOf(node) != null;
        }

        String describe() {
            return key == null ? "" : " with a value of " + key;
        }
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
        return mostFreeCapacity(capabilities, parameters, Spread.NONE);
    }

    private Agent mostFreeCapacity(List<VolumeCapability> capabilities, Map<String, String> parameters, Spread spread) {
        Map<String, Agent> agentOf = new HashMap<>();
        Map<String, Long> byNode = available(capabilities, withoutReplication(parameters), agentOf);
        byNode.keySet().removeIf(node -> !spread.allows(agentOf.get(node)));
        if (byNode.isEmpty()) {
            throw CsiException.resourceExhausted("no answering node has a value of " + spread.key() + " (nodes and their values: "
                    + valuesOf(agentOf.values(), spread) + ")");
        }
        return agentOf.get(roomiest(byNode));
    }

    /**
     * A replicated volume's secondaries (agents), besides {@code primary}, {@code alsoOn} (a node that must hold one, or
     * null) first: {@link #secondaries(String, String, Map, Map, Spread, int)} on what the nodes answer.
     */
    List<Agent> secondaries(Agent primary, Agent alsoOn, CreateVolumeRequest req, int replicas, Spread spread) {
        Map<String, Agent> agentOf = new HashMap<>();
        Map<String, Long> byNode = available(req.getVolumeCapabilitiesList(), withoutReplication(req.getParametersMap()), agentOf);
        agentOf.put(primary.nodeId(), primary);
        if (alsoOn != null) agentOf.put(alsoOn.nodeId(), alsoOn);
        Map<String, String> values = new TreeMap<>();
        agentOf.forEach((node, agent) -> { String v = spread.valueOf(agent); if (v != null) values.put(node, v); });
        return secondaries(primary.nodeId(), alsoOn == null ? null : alsoOn.nodeId(), byNode, values, spread, replicas)
                .stream().map(agentOf::get).toList();
    }

    private static Map<String, String> valuesOf(java.util.Collection<Agent> nodes, Spread spread) {
        Map<String, String> values = new TreeMap<>();
        nodes.forEach(a -> values.put(a.nodeId(), String.valueOf(spread.valueOf(a))));
        return values;
    }

    /** Capacity is asked as for an ordinary volume: a lone node refuses replicas (RESOURCE_EXHAUSTED) by design. */
    private static Map<String, String> withoutReplication(Map<String, String> parameters) {
        Map<String, String> plain = new HashMap<>(parameters);
        plain.remove(io.csi4j.driver.volume.ReplicationParameters.REPLICAS);
        plain.remove(io.csi4j.driver.volume.ReplicationParameters.INTERVAL);
        plain.remove(io.csi4j.driver.volume.ReplicationParameters.SPREAD_KEY);
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
        Map<String, String> own = new TreeMap<>();
        availableByNode.keySet().forEach(n -> own.put(n, n));
        own.put(primary, primary);
        return secondaries(primary, null, availableByNode, own, Spread.NONE, replicas);
    }

    /**
     * As {@link #secondaries(String, Map, int)}, with {@code alsoOn} (a node the requisite topology asks for, or null)
     * the first secondary, and every replica's node a different value in {@code valueByNode} (a node absent there lacks
     * the spread key and holds none): the roomiest node of each value not taken yet. RESOURCE_EXHAUSTED, the code CSI
     * gives "unable to provision in accessible_topology", when the primary's or {@code alsoOn}'s node lacks the key,
     * they share a value, or fewer distinct values answer than replicas are asked. Nothing is made before this answers.
     */
    static List<String> secondaries(String primary, String alsoOn, Map<String, Long> availableByNode,
                                    Map<String, String> valueByNode, Spread spread, int replicas) {
        String rule = spread.key() == null ? "" : " on nodes with distinct values of " + spread.key();
        java.util.Set<String> taken = new java.util.HashSet<>();
        List<String> chosen = new ArrayList<>();
        String primaryValue = valueByNode.get(primary);
        if (primaryValue == null) {
            throw CsiException.resourceExhausted(replicas + " replicas" + rule + ": node " + primary
                    + ", where the primary goes, has no value of " + spread.key());
        }
        taken.add(primaryValue);
        if (alsoOn != null && !alsoOn.equals(primary)) {
            String value = valueByNode.get(alsoOn);
            if (value == null || !taken.add(value)) {
                throw CsiException.resourceExhausted(replicas + " replicas" + rule + ": node " + alsoOn + ", which the requisite"
                        + " topology names, has " + (value == null ? "no value of " + spread.key() : "the value " + value
                        + " of the primary's node " + primary));
            }
            chosen.add(alsoOn);
        }
        Map<String, Long> left = new TreeMap<>(availableByNode);
        left.keySet().removeIf(n -> n.equals(primary) || n.equals(alsoOn) || !valueByNode.containsKey(n) || taken.contains(valueByNode.get(n)));
        while (chosen.size() < replicas - 1) {
            if (left.isEmpty()) {
                if (spread.key() == null) {
                    Map<String, Long> others = new TreeMap<>(availableByNode);
                    others.remove(primary);
                    throw CsiException.resourceExhausted(replicas + " replicas need " + replicas + " answering nodes; besides "
                            + primary + " only " + others.keySet() + " answered");
                }
                Map<String, String> known = new TreeMap<>(valueByNode);
                known.keySet().removeIf(n -> !availableByNode.containsKey(n) && !n.equals(primary) && !n.equals(alsoOn));
                throw CsiException.resourceExhausted(replicas + " replicas need " + replicas + " distinct values of "
                        + spread.key() + " among the answering nodes; they have " + new java.util.TreeSet<>(known.values())
                        + " (node: value " + known + "; nodes without the key hold no replica)");
            }
            String next = roomiest(left);
            chosen.add(next);
            String value = valueByNode.get(next);
            left.keySet().removeIf(n -> valueByNode.get(n).equals(value));
        }
        return chosen;
    }

    /**
     * The node of the content source (a replicated volume's: its current primary's); NOT_FOUND for an id of ours naming
     * no node; empty without a source.
     */
    private Optional<Agent> source(CreateVolumeRequest req) {
        if (!req.hasVolumeContentSource()) return Optional.empty();
        var source = req.getVolumeContentSource();
        if (source.hasSnapshot()) return owner(ObjectId.Kind.SNAPSHOT, source.getSnapshot().getSnapshotId(), "snapshot");
        if (source.hasVolume()) {
            var replicated = io.csi4j.driver.id.ReplicatedVolumeId.parse(source.getVolume().getVolumeId());
            // a replicated volume's data is its current primary's copy, found as every call to it is routed
            if (replicated.isPresent()) return Optional.of(new Replicas(agents, this, Replicas.FAILOVER_AFTER).primary(replicated.get()));
            return owner(ObjectId.Kind.VOLUME, source.getVolume().getVolumeId(), "volume");
        }
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
