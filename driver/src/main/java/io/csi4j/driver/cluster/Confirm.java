package io.csi4j.driver.cluster;

import io.csi4j.driver.id.ReplicatedVolumeId;
import java.util.Collection;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

/**
 * When the controller's scheduler may confirm an unconfirmed primary (docs/replication.md, "Confirmation"): only when
 * <b>every</b> node the replicated id names answered the listing of this tick, no node holds a tombstone of it, and
 * the copy is PRIMARY at the highest epoch of all answers. Then no failover can have happened while that copy's node
 * was away: a failover's new primary would answer a higher epoch. With a node silent nothing is decided: the silent
 * node may hold the epoch that supersedes it.
 */
final class Confirm {
    private Confirm() {}

    /** One answering node's copy of the volume, as its listing said ({@code inUse}: a FENCED copy staged or published there). */
    record Copy(String nodeId, String role, long epoch, boolean unconfirmed, boolean inUse) {
        Copy(String nodeId, String role, long epoch, boolean unconfirmed) {
            this(nodeId, role, epoch, unconfirmed, false);
        }
    }

    /** The copy to confirm at its epoch, if any. */
    static Optional<Copy> which(ReplicatedVolumeId id, Set<String> answeredNodes, Collection<Copy> copies, boolean tombstoned) {
        if (tombstoned) return Optional.empty();
        Set<Integer> held = new HashSet<>();
        for (String node : answeredNodes) {
            int i = id.replicaIndex(node);
            if (i >= 0) held.add(i);
        }
        if (held.size() < id.replicas()) return Optional.empty();         // a named node is silent
        long top = copies.stream().mapToLong(Copy::epoch).max().orElse(0);
        var primaries = copies.stream().filter(c -> c.role().equals("PRIMARY") && c.epoch() == top).toList();
        if (primaries.size() != 1) return Optional.empty();                 // none, or (never) two at one epoch
        return primaries.getFirst().unconfirmed() ? Optional.of(primaries.getFirst()) : Optional.empty();
    }
}
