package io.csi4j.driver.cluster;

import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.sdk.CsiException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ArrayList;
import java.util.Optional;
import java.util.function.Function;

/** Which agent a request goes to, from the ids in it. */
final class Owners {
    private final Agents agents;

    Owners(Agents agents) {
        this.agents = agents;
    }

    /**
     * The agent owning {@code id}: the node the id names (NOT_FOUND if no such node is in the cluster). An id
     * that is not of our shape exists on no node: any agent answers for it exactly as a single plugin would
     * (NOT_FOUND, or OK for a delete), so the router adds no semantics of its own there.
     */
    Agent of(ObjectId.Kind kind, String id, String what) {
        return ObjectId.parse(kind, id).map(parsed -> agents.owner(parsed, what)).orElseGet(agents::any);
    }

    /**
     * Whether {@code id} is of our shape and names a node declared lost for good ({@code csi4j cluster forget-node}):
     * its artifacts are gone with the node, so a delete of it is done (the spec's OK for "does not exist anymore").
     */
    boolean onForgottenNode(ObjectId.Kind kind, String id) {
        return ObjectId.parse(kind, id).map(parsed -> agents.forgottenNode(parsed.nodeTag()).isPresent()).orElse(false);
    }

    /**
     * The one node all {@code ids} live on, for requests that span objects (group snapshots, volume groups).
     * Members on several nodes: FAILED_PRECONDITION naming them (cross-node groups are not supported yet).
     */
    Agent common(ObjectId.Kind kind, List<String> ids, String what, String request) {
        return common(kind, ids, what, request, null);
    }

    /** As above; ids not of our shape go with {@code whenNoneOurs} (not null) when no id of ours names a node. */
    Agent common(ObjectId.Kind kind, List<String> ids, String what, String request, Agent whenNoneOurs) {
        Map<Agent, List<String>> byNode = byNode(kind, ids, what, whenNoneOurs);
        if (byNode.size() > 1) {
            StringBuilder nodes = new StringBuilder();
            byNode.forEach((agent, list) -> nodes.append(nodes.isEmpty() ? "" : ", ").append(agent.nodeId()).append(": ").append(list));
            throw CsiException.failedPrecondition(request + ": the " + what + "s live on different nodes (" + nodes
                    + "); this cluster does not yet span nodes for one " + request + ", so every member must be on one node");
        }
        return byNode.keySet().iterator().next();
    }

    /**
     * The ids grouped by the agent owning each, in the order they come. An id that is not of our shape exists on no
     * node: it goes with the first node an id of ours names (which answers NOT_FOUND for it, as a single plugin
     * would), so it never makes a request look as if it spanned nodes.
     */
    Map<Agent, List<String>> byNode(ObjectId.Kind kind, List<String> ids, String what) {
        return byNode(kind, ids, what, null);
    }

    /**
     * Volume ids grouped by the node that serves each: a replicated id goes to its current primary's node
     * ({@code primaryOf}: UNAVAILABLE while a handoff runs), as every other call on it is routed; the rest as above.
     */
    Map<Agent, List<String>> byServingNode(List<String> volumeIds, String what, Function<ReplicatedVolumeId, Agent> primaryOf) {
        return byNode(ObjectId.Kind.VOLUME, volumeIds, what, null,
                id -> ReplicatedVolumeId.parse(id).map(primaryOf));
    }

    private Map<Agent, List<String>> byNode(ObjectId.Kind kind, List<String> ids, String what, Agent whenNoneOurs) {
        return byNode(kind, ids, what, whenNoneOurs, id -> Optional.empty());
    }

    private Map<Agent, List<String>> byNode(ObjectId.Kind kind, List<String> ids, String what, Agent whenNoneOurs,
                                            Function<String, Optional<Agent>> routed) {
        Map<Agent, List<String>> byNode = new LinkedHashMap<>();
        List<String> foreign = new ArrayList<>();
        for (String id : ids) {
            Optional<Agent> owner = routed.apply(id).or(() -> ObjectId.parse(kind, id).map(parsed -> agents.owner(parsed, what)));
            if (owner.isEmpty()) foreign.add(id);
            else byNode.computeIfAbsent(owner.get(), a -> new ArrayList<>()).add(id);
        }
        if (!foreign.isEmpty()) {
            Agent home = !byNode.isEmpty() ? byNode.keySet().iterator().next() : whenNoneOurs != null ? whenNoneOurs : agents.any();
            byNode.computeIfAbsent(home, a -> new ArrayList<>()).addAll(foreign);
        }
        return byNode;
    }
}
