package io.csi4j.driver.cluster;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.FenceReplicaRequest;
import io.csi4j.proto.cluster.ListReplicasRequest;
import io.csi4j.proto.cluster.PeerAgent;
import io.csi4j.proto.cluster.ReplicaEntry;
import io.csi4j.proto.cluster.SyncReplicaRequest;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * Starts replication rounds (docs/replication.md) without state of its own: every {@link #TICK} it asks each agent
 * which of its secondaries are due (their interval passed since their last round there, NodeAgent.ListReplicas) and has
 * each due one pull from the current primary (NodeAgent.SyncReplica), one round per volume at a time, each on a
 * virtual thread: a slow copy delays no other volume. A controller restart loses nothing: the agents know what is due.
 * From the same answers it fences a superseded primary ({@link #fenceSuperseded}) within a tick of its answering.
 */
final class ReplicationScheduler implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ReplicationScheduler.class.getName());
    /** Well under the shortest interval (5 s), so a round starts at most this late. */
    static final Duration TICK = Duration.ofSeconds(1);
    private static final Duration ASK = Duration.ofSeconds(10);

    private final Agents agents;
    private final Replicas replicas;
    private final Set<String> running = ConcurrentHashMap.newKeySet();
    private final Thread loop;

    ReplicationScheduler(Agents agents) {
        this.agents = agents;
        this.replicas = new Replicas(agents, new Placement(agents), Replicas.FAILOVER_AFTER);   // it never fails over
        this.loop = Thread.ofVirtual().name("csi4j-replication").start(this::run);
    }

    private void run() {
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Thread.sleep(TICK);
            } catch (InterruptedException e) {
                return;
            }
            Map<String, Map<Agent, ReplicaEntry>> seen = new HashMap<>();
            for (Agent agent : agents.nodes()) {
                if (!agent.answering()) continue;
                try {
                    for (ReplicaEntry e : agent.call(a -> a.nodeAgent().withDeadlineAfter(ASK.toMillis(), TimeUnit.MILLISECONDS)
                            .listReplicas(ListReplicasRequest.getDefaultInstance())).getEntriesList()) {
                        seen.computeIfAbsent(e.getVolumeId(), k -> new HashMap<>()).put(agent, e);
                        if (e.getDue() && running.add(e.getVolumeId())) start(agent, e.getVolumeId());
                    }
                } catch (RuntimeException silent) {
                    LOG.fine(() -> "replication: " + agent.nodeId() + " did not list its replicas: " + silent.getMessage());
                }
            }
            seen.forEach(this::fenceSuperseded);
        }
    }

    /**
     * A copy answering PRIMARY below an epoch another copy of the volume answers was superseded (a failover while it
     * was silent: a partition, a stopped or restarted agent): it is told the higher epoch at once, within a tick of
     * answering again, without waiting for a routed call; it fences its copy and stops its mounts' writes before it
     * answers (NodeAgent.FenceReplica). Only the agents' own answers are compared: nothing is kept between ticks.
     */
    private void fenceSuperseded(String volumeId, Map<Agent, ReplicaEntry> copies) {
        long top = copies.values().stream().mapToLong(ReplicaEntry::getEpoch).max().orElse(0);
        copies.forEach((node, e) -> {
            if (!e.getRole().equals("PRIMARY") || e.getEpoch() >= top) return;
            try {
                var fenced = node.call(a -> a.nodeAgent().withDeadlineAfter(ASK.toMillis(), TimeUnit.MILLISECONDS)
                        .fenceReplica(FenceReplicaRequest.newBuilder().setVolumeId(volumeId).setEpoch(top).build()));
                LOG.warning(() -> "replication: the copy of " + volumeId + " on node '" + node.nodeId() + "' was primary at epoch "
                        + e.getEpoch() + " while epoch " + top + " exists: now " + fenced.getRole());
            } catch (RuntimeException failed) {
                LOG.warning(() -> "replication: fencing the copy of " + volumeId + " on node '" + node.nodeId() + "' failed (next tick"
                        + " retries): " + failed.getMessage());
            }
        });
    }

    private void start(Agent secondary, String volumeId) {
        Thread.ofVirtual().name("csi4j-round-" + volumeId).start(() -> {
            try {
                var id = ReplicatedVolumeId.parse(volumeId).orElseThrow();
                Agent primary = replicas.primary(id);
                if (primary == secondary) return;
                var from = PeerAgent.newBuilder().setNodeId(primary.nodeId()).setAddress(primary.address())
                        .setAuthority(primary.authority()).build();
                var pulled = secondary.call(a -> a.nodeAgent().syncReplica(SyncReplicaRequest.newBuilder()
                        .setVolumeId(volumeId).setPrimary(from).build()));
                LOG.fine(() -> "replication: " + volumeId + " on " + secondary.nodeId() + " holds " + pulled.getPoint());
            } catch (RuntimeException failed) {
                // the next tick after the interval tries again; a deleted volume is simply no longer listed
                LOG.info(() -> "replication: round of " + volumeId + " on " + secondary.nodeId() + " failed: " + failed.getMessage());
            } finally {
                running.remove(volumeId);
            }
        });
    }

    @Override
    public void close() {
        loop.interrupt();
    }
}
