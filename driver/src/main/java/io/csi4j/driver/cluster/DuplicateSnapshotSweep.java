package io.csi4j.driver.cluster;

import io.csi4j.proto.cluster.ListNamedSnapshotsRequest;
import io.csi4j.proto.csi.DeleteSnapshotRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;

/**
 * Deletes the older of several snapshots of one name and source on a replicated volume's nodes
 * ({@link SnapshotDuplicates}), from the scheduler's tick: every {@link #EVERY} it asks the agents that answered the
 * tick's listing for their named snapshots of replicated volumes (NodeAgent.ListNamedSnapshots), and each older
 * duplicate is deleted on its node by the node's ordinary DeleteSnapshot. One sweep at a time, on a virtual thread of
 * its own: it delays no round. Nothing is kept between sweeps; a delete that fails is planned again next time.
 */
final class DuplicateSnapshotSweep {
    private static final Logger LOG = Logger.getLogger(DuplicateSnapshotSweep.class.getName());
    /** Duplicates are rare and harmless until deleted: a listing of every node's snapshots this often, not each tick. */
    static final Duration EVERY = Duration.ofSeconds(5);
    private static final Duration ASK = Duration.ofSeconds(10);

    private final AtomicBoolean busy = new AtomicBoolean();
    private volatile Instant last = Instant.EPOCH;

    /** {@code answering}: the agents that answered this tick's listing. */
    void tick(Collection<Agent> answering) {
        Instant now = Instant.now();
        if (answering.isEmpty() || now.isBefore(last.plus(EVERY)) || !busy.compareAndSet(false, true)) return;
        last = now;
        List<Agent> nodes = List.copyOf(answering);
        Thread.ofVirtual().name("csi4j-snapshot-duplicates").start(() -> {
            try {
                sweep(nodes);
            } finally {
                busy.set(false);
            }
        });
    }

    private void sweep(List<Agent> nodes) {
        Map<String, Agent> byNode = new HashMap<>();
        Set<String> answered = new HashSet<>();
        List<SnapshotDuplicates.Held> listed = new ArrayList<>();
        for (Agent agent : nodes) {
            try {
                var named = agent.call(a -> a.nodeAgent().withDeadlineAfter(ASK.toMillis(), TimeUnit.MILLISECONDS)
                        .listNamedSnapshots(ListNamedSnapshotsRequest.getDefaultInstance()));
                byNode.put(agent.nodeId(), agent);
                answered.add(agent.nodeId());
                named.getSnapshotsList().forEach(s -> listed.add(new SnapshotDuplicates.Held(agent.nodeId(), s.getName(),
                        s.getSnapshotId(), s.getSourceVolumeId(), Instant.EPOCH.plusNanos(s.getAnsweredAtUnixNanos()))));
            } catch (RuntimeException silent) {   // an older agent without the call, or silent: its volumes wait
                LOG.fine(() -> "snapshots: " + agent.nodeId() + " did not list its named snapshots: " + silent.getMessage());
            }
        }
        for (var d : SnapshotDuplicates.older(answered, listed)) {
            var older = d.older();
            try {
                byNode.get(older.nodeId()).call(a -> a.controller().deleteSnapshot(
                        DeleteSnapshotRequest.newBuilder().setSnapshotId(older.snapshotId()).build()));
                LOG.info(() -> "snapshots: deleted " + older.snapshotId() + " on node '" + older.nodeId() + "' (answered "
                        + older.answeredAt() + "), an older snapshot named '" + older.name() + "' of " + older.sourceVolumeId()
                        + " than " + d.kept().snapshotId() + " on node '" + d.kept().nodeId() + "' (answered " + d.kept().answeredAt()
                        + "; kept: the CO holds or will hold the one answered last)");
            } catch (RuntimeException failed) {
                LOG.warning(() -> "snapshots: deleting the older duplicate " + older.snapshotId() + " named '" + older.name()
                        + "' on node '" + older.nodeId() + "' failed (tried again): " + failed.getMessage());
            }
        }
    }
}
