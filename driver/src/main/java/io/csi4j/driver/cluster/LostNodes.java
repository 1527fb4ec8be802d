package io.csi4j.driver.cluster;

import io.csi4j.driver.domain.DomainException;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The rules of a node declared permanently lost ({@code csi4j cluster forget-node}; docs/replication.md, "A node lost
 * for good"), pure: when it may be forgotten, what the controller makes of the marks its agents hold (the controller
 * keeps none: the marks are durable on the agents, {@code replication/ForgottenNodes}), and what its agent is told if it
 * answers again. The effect on tombstones is {@link Sweep}'s: a forgotten node counts as a node that answered holding
 * nothing.
 */
final class LostNodes {
    private LostNodes() {}

    /** One agent the controller knows of, as it sees it now. */
    record Seen(String nodeId, String address, boolean answering, Duration silentFor) {}

    /**
     * Refuses (FAILED_PRECONDITION naming the node) to forget a node an agent of which answers, or has been silent for
     * less than {@code failoverAfter} (a restart or a short partition is not a loss; the delay is the one after which
     * a silent primary is failed over). A node no agent ever said it is may be forgotten: nothing answers for it.
     */
    static void checkForgettable(String nodeId, List<Seen> agents, Duration failoverAfter) {
        checkForgettable(nodeId, agents, List.of(), failoverAfter);
    }

    /**
     * As above; {@code unidentified}: the addresses of agents that never said which node they are since this controller
     * started. A node no agent claims is refused while any is left: it may be that node, live or silent only briefly
     * (a controller restarted during a network blip), and forgetting it would skip the checks above (remove a lost
     * node's address from --nodes first, as merged lists need anyway).
     */
    static void checkForgettable(String nodeId, List<Seen> agents, List<String> unidentified, Duration failoverAfter) {
        if (nodeId == null || nodeId.isBlank()) throw DomainException.invalid("node_id is REQUIRED");
        if (!unidentified.isEmpty() && agents.stream().noneMatch(a -> nodeId.equals(a.nodeId()))) {
            throw DomainException.precondition("node '" + nodeId + "' is claimed by no agent, and the agent(s) at " + unidentified
                    + " never answered since this controller started: one may be that node; remove a lost node's address from"
                    + " --nodes (or wait until it answers), then forget it");
        }
        for (Seen a : agents) {
            if (!nodeId.equals(a.nodeId())) continue;
            if (a.answering()) {
                throw DomainException.precondition("node '" + nodeId + "' answers (agent " + a.address()
                        + "): a live node cannot be forgotten; stop its agent for good first");
            }
            if (a.silentFor().compareTo(failoverAfter) < 0) {
                throw DomainException.precondition("node '" + nodeId + "' has been silent for " + a.silentFor().toSeconds()
                        + "s only: it may be forgotten once silent for --failover-after (" + failoverAfter.toSeconds() + "s)");
            }
        }
    }

    /**
     * One copy an answering node listed (NodeAgent.ListReplicas); {@code unconfirmed}: a PRIMARY that may have been away
     * ({@code ReplicaEntry.unconfirmed}), so a failover to the node being forgotten may have superseded it.
     */
    record Copy(String volumeId, String role, long epoch, boolean unconfirmed) {
        Copy(String volumeId, String role, long epoch) {
            this(volumeId, role, epoch, false);
        }
    }

    /**
     * The live replicated volumes naming {@code nodeId} whose primary may be there: no answering node lists a tombstone
     * of it, and no answering copy is a confirmed PRIMARY at the highest epoch answered. An unconfirmed one proves
     * nothing: its node may have been away while the node being forgotten was failed over to at a higher epoch (the
     * other copies need not know it yet), and once forgotten that node counts as answered for Confirm, which would
     * make the stale copy writable (docs/replication.md, "Confirmation"). Forgetting the node is refused while any
     * is left (fail it over first: ControllerPublishVolume elsewhere after --failover-after, or CSI-Addons Promote),
     * so a forgotten node never holds the only primary of a live volume and routing may leave it out.
     * {@code copies}: every answering node's listed copies; {@code tombstoned}: every id an answering node holds a
     * tombstone of.
     */
    static List<String> withoutPrimary(String nodeId, Collection<Copy> copies, java.util.Set<String> tombstoned) {
        return withoutPrimary(nodeId, copies, tombstoned, false);
    }

    /**
     * As above; with {@code acceptPossibleLoss} (the operator's explicit choice, {@code forget-node --accept-possible-loss})
     * an unconfirmed PRIMARY at the highest epoch answered counts: the way out of a primary that restarted while its
     * only other replica's node was lost, which otherwise waits for that node for ever. What the lost node may have
     * taken as a newer primary is given up. A volume with no answering primary at all is still refused: routing would
     * find none.
     */
    static List<String> withoutPrimary(String nodeId, Collection<Copy> copies, java.util.Set<String> tombstoned, boolean acceptPossibleLoss) {
        Map<String, List<Copy>> byVolume = new TreeMap<>();
        for (Copy c : copies) byVolume.computeIfAbsent(c.volumeId(), k -> new java.util.ArrayList<>()).add(c);
        return byVolume.entrySet().stream().filter(e -> !tombstoned.contains(e.getKey()))
                .filter(e -> io.csi4j.driver.id.ReplicatedVolumeId.parse(e.getKey()).map(id -> id.heldBy(nodeId)).orElse(false))
                .filter(e -> {
                    long top = e.getValue().stream().mapToLong(Copy::epoch).max().orElse(0);
                    return e.getValue().stream().noneMatch(c -> c.role().equals("PRIMARY") && c.epoch() == top
                            && (acceptPossibleLoss || !c.unconfirmed()));
                })
                .map(Map.Entry::getKey).toList();
    }

    /** FAILED_PRECONDITION naming the node and (up to ten of) the volumes whose primary may be on it. */
    static void checkNoPrimaryThere(String nodeId, List<String> volumes) {
        if (volumes.isEmpty()) return;
        throw DomainException.precondition("node '" + nodeId + "' may hold the primary of " + volumes.size() + " replicated volume(s) "
                + volumes.stream().limit(10).toList() + ": fail each over first (ControllerPublishVolume on another replica's node "
                + "once it has been silent for --failover-after, or CSI-Addons PromoteVolume), then forget it; a primary listed unconfirmed "
                + "does not count (the node may hold a newer epoch): it waits for that node as before, unless you accept losing what that "
                + "node may hold (--accept-possible-loss)");
    }

    /** Every node some agent holds a mark of, with the earliest time any holds. */
    static Map<String, Instant> union(Collection<Map<String, Instant>> held) {
        var all = new TreeMap<String, Instant>();
        held.forEach(marks -> marks.forEach((node, at) -> all.merge(node, at, (x, y) -> x.isBefore(y) ? x : y)));
        return all;
    }

    /** The marks of {@code union} an agent holding {@code held} lacks (it is told them), never its own node's. */
    static Map<String, Instant> missing(String self, Map<String, Instant> held, Map<String, Instant> union) {
        var out = new TreeMap<String, Instant>();
        union.forEach((node, at) -> {
            if (!held.containsKey(node) && !node.equals(self)) out.put(node, at);
        });
        return out;
    }

    /** Why an agent of {@code nodeId} is refused, or null when its node is not forgotten. */
    static String refusal(String nodeId, Map<String, Instant> forgotten) {
        Instant at = forgotten.get(nodeId);
        if (at == null) return null;
        return "node '" + nodeId + "' was forgotten (csi4j cluster forget-node) at " + at + ": its copies count as gone; "
                + "start it afresh (empty data dir) under a new node id";
    }
}
