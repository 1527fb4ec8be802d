package io.csi4j.driver.cluster;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.FindSnapshotRequest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where CreateSnapshot of a replicated volume goes. Snapshot names are checked by the node that answers (as for an
 * ordinary volume: its one node), and a replicated volume's snapshots stay on the node that was its primary when they
 * were taken; so a retry by name after a handoff would be cut again on the new primary. The nodes of the volume's
 * replicas are asked first: one that holds a snapshot of that name answers the retry (the same snapshot for the same
 * source, ALREADY_EXISTS for another), whatever its copy's role now; else the current primary takes it.
 * A replica's node that does not answer is not waited for (a degraded volume keeps taking snapshots), so a retry while
 * the node holding the name is silent is cut again; when several answering nodes hold the name, the newest answers
 * and the sweep deletes the others ({@link SnapshotDuplicates}, {@link DuplicateSnapshotSweep}).
 */
final class ReplicaSnapshotNames {
    private final Agents agents;
    private final Replicas replicas;

    ReplicaSnapshotNames(Agents agents, Replicas replicas) {
        this.agents = agents;
        this.replicas = replicas;
    }

    Agent nodeFor(ReplicatedVolumeId source, String name) {
        return holding(source, name).orElseGet(() -> replicas.primary(source));
    }

    private Optional<Agent> holding(ReplicatedVolumeId source, String name) {
        if (name.isEmpty()) return Optional.empty();     // the node refuses it (INVALID_ARGUMENT)
        List<Agent> nodes = new ArrayList<>();
        for (String tag : source.tags()) agents.byNodeTag(tag).ifPresent(nodes::add);
        var answers = Fanout.all(nodes, a -> a.nodeAgent().findSnapshot(FindSnapshotRequest.newBuilder().setName(name).build()));
        Map<String, Agent> byNode = new HashMap<>();
        List<SnapshotDuplicates.Held> holders = new ArrayList<>();
        answers.results().forEach((agent, found) -> {
            if (found.getSnapshotId().isEmpty()) return;
            byNode.put(agent.nodeId(), agent);
            holders.add(new SnapshotDuplicates.Held(agent.nodeId(), name, found.getSnapshotId(), found.getSourceVolumeId(),
                    Instant.EPOCH.plusNanos(found.getAnsweredAtUnixNanos())));
        });
        return SnapshotDuplicates.answer(source.toString(), holders).map(h -> byNode.get(h.nodeId()));
    }
}
