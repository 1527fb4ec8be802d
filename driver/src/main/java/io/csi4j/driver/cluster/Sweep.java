package io.csi4j.driver.cluster;

import io.csi4j.driver.id.ReplicatedVolumeId;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What to do with the leftovers of replicated volumes deleted while a replica's node did not answer (docs/replication.md,
 * "Deletion"), decided from one tick's answers to NodeAgent.ListReplicas, with no state of its own:
 * <ul>
 *   <li>a node that answered with a state of an id some answering node holds a tombstone of is <b>swept</b>: its
 *       replica is deleted (DeleteReplica with a tombstone of its own, so the memory outlives a crash half way);</li>
 *   <li>a tombstone is <b>forgotten</b> only when every node the id names answered in that same tick holding no state
 *       of it (nothing is left to sweep anywhere) and it is older than {@link #GRACE}; a node declared permanently
 *       lost ({@link LostNodes}) counts as one that answered holding nothing.</li>
 * </ul>
 * A tombstone never deletes a live volume: it is written only by a DeleteVolume the CO sent (after the step that may
 * refuse it), and replicated ids are random (80 bits) and never reused: CreateReplica refuses a tombstoned id, and a
 * CreateVolume retried by name finds the id only on a node that still holds its row, which the sweep removes before the
 * tombstones may go.
 */
final class Sweep {
    /**
     * How long a tombstone outlives the moment nothing is left: longer than any call the controller makes (a
     * CreateReplica of a CreateVolume retried by name that found the id before the delete cannot arrive after it).
     */
    static final Duration GRACE = Duration.ofMinutes(10);

    private Sweep() {}

    /** One node's answer: the ids it holds a state of, and its tombstones with when each was written. */
    record Listing(Set<String> states, Map<String, Instant> tombstones) {}

    /** Delete {@code volumeId}'s leftover on {@code nodeId}, or drop that node's tombstone of it. */
    record Action(String nodeId, String volumeId) {}

    record Plan(List<Action> sweeps, List<Action> forgets) {}

    /** {@code answered}: node id to its listing, for the nodes that answered this tick only. */
    static Plan plan(Map<String, Listing> answered, Instant now, Duration grace) {
        return plan(answered, Set.of(), now, grace);
    }

    /**
     * As above, {@code forgotten} naming the nodes declared permanently lost ({@link LostNodes}): each counts as a node
     * that answered holding no state (it never will again: its agent is refused if it does), so the tombstones of a
     * volume that named it may go once every other node it names answered clean.
     */
    static Plan plan(Map<String, Listing> answered, Set<String> forgotten, Instant now, Duration grace) {
        List<Action> sweeps = new ArrayList<>();
        List<Action> forgets = new ArrayList<>();
        Set<String> tombstoned = new java.util.TreeSet<>();
        answered.values().forEach(l -> tombstoned.addAll(l.tombstones().keySet()));
        for (String volumeId : tombstoned) {
            var id = ReplicatedVolumeId.parse(volumeId);
            boolean leftover = false;
            Set<Integer> seen = new java.util.HashSet<>();      // the id's replicas whose node answered or is forgotten
            for (var e : answered.entrySet()) {
                if (id.isPresent() && id.get().heldBy(e.getKey())) seen.add(id.get().replicaIndex(e.getKey()));
                if (e.getValue().states().contains(volumeId)) {
                    sweeps.add(new Action(e.getKey(), volumeId));
                    leftover = true;
                }
            }
            for (String node : forgotten) {
                if (id.isPresent() && id.get().heldBy(node) && !answered.containsKey(node)) seen.add(id.get().replicaIndex(node));
            }
            boolean everyNodeSeen = id.isEmpty() || seen.size() == id.get().replicas();
            if (leftover || !everyNodeSeen) continue;
            for (var e : answered.entrySet()) {
                Instant at = e.getValue().tombstones().get(volumeId);
                if (at != null && !at.plus(grace).isAfter(now)) forgets.add(new Action(e.getKey(), volumeId));
            }
        }
        return new Plan(sweeps, forgets);
    }
}
