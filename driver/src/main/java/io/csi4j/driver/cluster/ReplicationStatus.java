package io.csi4j.driver.cluster;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.ReplicaRound;
import io.csi4j.proto.cluster.ReplicatedVolumeStatus;
import io.csi4j.proto.cluster.SecondaryStatus;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Every replicated volume as {@code csi4j cluster status} shows it (docs/replication.md, "Observability"), put together
 * from what each agent answered to NodeAgent.ListReplicaRounds: the primary is the node answering PRIMARY at the
 * highest epoch; each other node of the id is a secondary, silent (its agent does not answer), missing (it answers
 * without a copy), behind (its last round's lag exceeds two intervals), in sync, or without a round yet. Nothing is
 * asked here: the caller asked each agent once, whatever the number of volumes.
 */
final class ReplicationStatus {
    private ReplicationStatus() {}

    /** A node of a volume id: its node id (the tag when no agent claims it) and its rounds by volume id, empty when silent. */
    record Node(String nodeId, Optional<Map<String, ReplicaRound>> rounds) {}

    /** Each volume of {@code volumeIds} (sorted, once; ids that are not replicated are left out). */
    static List<ReplicatedVolumeStatus> of(Collection<String> volumeIds, Function<String, Node> byTag) {
        List<ReplicatedVolumeStatus> all = new ArrayList<>();
        for (String volumeId : new TreeSet<>(volumeIds)) {
            ReplicatedVolumeId.parse(volumeId).ifPresent(id -> all.add(volume(id, byTag)));
        }
        return all;
    }

    static ReplicatedVolumeStatus volume(ReplicatedVolumeId id, Function<String, Node> byTag) {
        String volumeId = id.toString();
        List<Node> nodes = id.tags().stream().map(byTag).toList();
        long epoch = 0;
        long interval = 0;
        for (Node n : nodes) {
            var r = n.rounds().map(m -> m.get(volumeId));        // empty: silent, or no copy there
            if (r.isPresent()) {
                epoch = Math.max(epoch, r.get().getEpoch());
                interval = Math.max(interval, r.get().getIntervalMillis());
            }
        }
        var out = ReplicatedVolumeStatus.newBuilder().setVolumeId(volumeId).setEpoch(epoch).setIntervalMillis(interval);
        int primary = -1;
        for (int i = 0; i < nodes.size(); i++) {
            ReplicaRound r = nodes.get(i).rounds().map(m -> m.get(volumeId)).orElse(null);
            if (r != null && r.getRole().equals("PRIMARY") && r.getEpoch() == epoch) primary = i;
        }
        List<String> problems = new ArrayList<>();
        if (primary >= 0) {
            out.setPrimaryNodeId(nodes.get(primary).nodeId());
        } else {
            problems.add("no node answers as its primary at epoch " + epoch);
        }
        for (int i = 0; i < nodes.size(); i++) {
            if (i == primary) continue;
            Node n = nodes.get(i);
            var s = SecondaryStatus.newBuilder().setNodeId(n.nodeId());
            if (n.rounds().isEmpty()) {
                s.setState(SecondaryStatus.State.SILENT);
                problems.add("replica on node '" + n.nodeId() + "' is missing: its agent does not answer");
            } else if (n.rounds().get().get(volumeId) == null) {
                s.setState(SecondaryStatus.State.MISSING);
                problems.add("replica on node '" + n.nodeId() + "' is missing: its node holds no copy");
            } else {
                ReplicaRound r = n.rounds().get().get(volumeId);
                s.setRole(r.getRole()).setEpoch(r.getEpoch()).setPoint(r.getPoint());
                if (r.getHasRound()) {
                    s.setHasRound(true).setLagMillis(r.getLagMillis()).setLastSyncUnixMillis(r.getLastSyncUnixMillis())
                            .setLastRoundBytes(r.getLastRoundBytes()).setLastRoundMillis(r.getLastRoundMillis());
                }
                if (!r.getRole().equals("SECONDARY")) {
                    s.setState(SecondaryStatus.State.OTHER);
                    problems.add("replica on node '" + n.nodeId() + "' is " + r.getRole() + " at epoch " + r.getEpoch());
                } else if (r.getHasRound() && interval > 0 && r.getLagMillis() > 2 * interval) {
                    s.setState(SecondaryStatus.State.BEHIND);
                    problems.add("replica on node '" + n.nodeId() + "' is " + r.getLagMillis() / 1000 + "s behind (interval "
                            + interval / 1000 + "s, abnormal past two)");
                } else {
                    s.setState(r.getHasRound() ? SecondaryStatus.State.IN_SYNC : SecondaryStatus.State.NO_ROUND_YET);
                }
            }
            out.addSecondaries(s);
        }
        return out.setAbnormal(!problems.isEmpty()).setMessage(problems.isEmpty() ? "healthy" : String.join("; ", problems)).build();
    }
}
