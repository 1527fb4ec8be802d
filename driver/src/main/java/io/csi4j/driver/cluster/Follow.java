package io.csi4j.driver.cluster;

import io.csi4j.driver.id.ReplicatedVolumeId;
import java.util.Collection;
import java.util.List;

/**
 * Which copies of a replicated volume the controller's scheduler tells to follow the current primary's epoch
 * (docs/replication.md, "Failover (as built)"; NodeAgent.FollowReplica): only when exactly one copy answers PRIMARY at
 * the highest epoch of the tick's answers (never during a handoff, whose epoch has no primary yet), every other copy
 * of a node the id names that is a SECONDARY below that epoch (the other secondary after a failover, an old primary
 * after a later handoff) or FENCED at or below it (the old primary back after a failover). A tombstoned volume is
 * swept, not followed. A FENCED copy whose listing says it is in use (staged or published there) is left out: it would
 * refuse, and asking it each tick cost a call, a refusal and an agent log line a second per volume for as long as the
 * old pod's mounts stay. The agent still decides under its lock: a fenced copy staged since its listing stays fenced.
 */
final class Follow {
    private Follow() {}

    /** The copies to bring to {@code epoch}; empty when nothing is to follow. */
    record Plan(long epoch, List<Confirm.Copy> copies) {}

    static Plan which(ReplicatedVolumeId id, Collection<Confirm.Copy> copies, boolean tombstoned) {
        long top = copies.stream().mapToLong(Confirm.Copy::epoch).max().orElse(0);
        var primaries = copies.stream().filter(c -> c.role().equals("PRIMARY") && c.epoch() == top).toList();
        if (tombstoned || primaries.size() != 1) return new Plan(top, List.of());
        var behind = copies.stream().filter(c -> id.replicaIndex(c.nodeId()) >= 0)
                .filter(c -> c.role().equals("SECONDARY") ? c.epoch() < top : c.role().equals("FENCED") && c.epoch() <= top && !c.inUse())
                .toList();
        return new Plan(top, behind);
    }
}
