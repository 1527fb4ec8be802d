package io.csi4j.driver.cluster;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.ConfirmPrimaryRequest;
import io.csi4j.proto.cluster.DeleteReplicaRequest;
import io.csi4j.proto.cluster.FenceReplicaRequest;
import io.csi4j.proto.cluster.FollowReplicaRequest;
import io.csi4j.proto.cluster.ForgetDeletedRequest;
import io.csi4j.proto.cluster.ForgetNodeRequest;
import io.csi4j.proto.cluster.ListReplicasRequest;
import io.csi4j.proto.cluster.ListReplicasResponse;
import io.csi4j.proto.cluster.PeerAgent;
import io.csi4j.proto.cluster.ReplicaEntry;
import io.csi4j.proto.cluster.SyncReplicaRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * Starts replication rounds (docs/replication.md) without state of its own: every {@link #TICK} it asks each agent
 * which of its secondaries are due (their interval passed since their last round there, NodeAgent.ListReplicas; all
 * agents at once, {@link ReplicaListings}) and has each due one pull from the current primary (NodeAgent.SyncReplica),
 * one round per volume at a time, each on a virtual thread: a slow copy delays no other volume. A controller restart
 * loses nothing: the agents know what is due.
 * From the same answers it fences a superseded primary ({@link #fenceSuperseded}) within a tick of its answering.
 * The same answers carry the agents' tombstones: the leftover of a volume deleted while its node was silent is swept
 * here when that node answers again, and no round starts for a tombstoned id ({@link Sweep}). The agents that answered
 * also have the older of two snapshots of one name and source deleted ({@link DuplicateSnapshotSweep}).
 */
final class ReplicationScheduler implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ReplicationScheduler.class.getName());
    /** Well under the shortest interval (5 s), so a round starts at most this late. */
    static final Duration TICK = io.csi4j.driver.replication.RoundDeadline.TICK;
    private static final Duration ASK = Duration.ofSeconds(10);
    /** The controller's start waits about this long at most for the forgotten nodes, every agent at once ({@link #learnForgotten}). */
    private static final Duration STARTUP_ASK = Duration.ofSeconds(3);

    private final Agents agents;
    private final Replicas replicas;
    private final Set<String> running = ConcurrentHashMap.newKeySet();
    private final DuplicateSnapshotSweep duplicates = new DuplicateSnapshotSweep();
    private final Thread loop;
    /** Told to every agent at each listing: its silence from the controller this long unconfirms its primaries. */
    private final ListReplicasRequest listing;

    ReplicationScheduler(Agents agents, Duration failoverAfter) {
        this.agents = agents;
        this.listing = ListReplicasRequest.newBuilder().setFailoverAfterMillis(failoverAfter.toMillis()).build();
        this.replicas = new Replicas(agents, new Placement(agents), Replicas.FAILOVER_AFTER);   // it never fails over
        // before the controller serves: an agent of a forgotten node that answers again is refused from the start
        learnForgotten(listAll(STARTUP_ASK));
        this.loop = Thread.ofVirtual().name("csi4j-replication").start(this::run);
    }

    /** Every answering agent's listing, all asked at once; one that fails is logged at fine and left out ({@link ReplicaListings}). */
    private Map<Agent, ListReplicasResponse> listAll(Duration ask) {
        return ReplicaListings.of(agents.nodes().stream().filter(Agent::answering).toList(), listing, ask);
    }

    /**
     * The nodes declared permanently lost, from the marks the answering agents hold ({@link LostNodes}): the agents of
     * those nodes are refused (and their listing dropped from this tick), and an answering agent lacking a mark is told
     * it (NodeAgent.ForgetNode), so the mark outlives the loss of the agents that first recorded it.
     */
    private Map<String, Instant> learnForgotten(Map<Agent, ListReplicasResponse> listed) {
        Map<Agent, Map<String, Instant>> held = new LinkedHashMap<>();
        listed.forEach((agent, l) -> {
            Map<String, Instant> marks = new HashMap<>();
            l.getForgottenNodesList().forEach(f -> marks.put(f.getNodeId(), Instant.ofEpochSecond(f.getForgottenAtUnixSeconds())));
            held.put(agent, marks);
        });
        // with the marks already known: a tick whose listings failed never un-forgets a node (no agent ever drops one)
        var sources = new java.util.ArrayList<Map<String, Instant>>(held.values());
        sources.add(agents.forgotten());
        Map<String, Instant> union = LostNodes.union(sources);
        if (union.isEmpty()) return union;
        agents.forgotten(union);
        listed.keySet().removeIf(a -> union.containsKey(a.nodeId()));
        held.forEach((agent, marks) -> {
            if (union.containsKey(agent.nodeId())) return;
            LostNodes.missing(agent.nodeId(), marks, union).forEach((node, at) -> {
                try {
                    agent.call(a -> a.nodeAgent().withDeadlineAfter(ASK.toMillis(), TimeUnit.MILLISECONDS).forgetNode(
                            ForgetNodeRequest.newBuilder().setNodeId(node).setForgottenAtUnixSeconds(at.getEpochSecond()).build()));
                    LOG.info(() -> "replication: told node '" + agent.nodeId() + "' that node '" + node + "' was forgotten");
                } catch (RuntimeException failed) {
                    LOG.fine(() -> "replication: telling " + agent.nodeId() + " that " + node + " was forgotten failed: " + failed.getMessage());
                }
            });
        });
        return union;
    }

    private void run() {
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Thread.sleep(TICK);
            } catch (InterruptedException e) {
                return;
            }
            Map<Agent, ListReplicasResponse> listed = listAll(ASK);
            Set<String> forgotten = learnForgotten(listed).keySet();
            Set<String> deleted = new HashSet<>();
            listed.values().forEach(l -> l.getTombstonesList().forEach(t -> deleted.add(t.getVolumeId())));
            Map<String, Map<Agent, ReplicaEntry>> seen = new HashMap<>();
            listed.forEach((agent, l) -> l.getEntriesList().forEach(e ->
                    seen.computeIfAbsent(e.getVolumeId(), k -> new HashMap<>()).put(agent, e)));
            seen.forEach((volumeId, copies) -> {
                if (!deleted.contains(volumeId)) fenceSuperseded(volumeId, copies);   // a deleted one's copies are swept
            });
            Set<String> answered = new HashSet<>();
            listed.keySet().forEach(a -> answered.add(a.nodeId()));
            answered.addAll(forgotten);                       // gone: it holds no epoch that could supersede a copy
            seen.forEach((volumeId, copies) -> confirm(volumeId, copies, answered, deleted.contains(volumeId)));
            seen.forEach((volumeId, copies) -> follow(volumeId, copies, deleted.contains(volumeId)));
            listed.forEach((agent, l) -> {
                for (ReplicaEntry e : l.getEntriesList()) {
                    if (e.getDue() && !deleted.contains(e.getVolumeId()) && running.add(e.getVolumeId())) start(agent, e.getVolumeId());
                }
            });
            if (!deleted.isEmpty()) sweep(listed, forgotten);
            duplicates.tick(listed.keySet());
        }
    }

    /** Leftovers of volumes deleted while their node was silent go, then tombstones nothing needs any more ({@link Sweep}). */
    private void sweep(Map<Agent, ListReplicasResponse> listed, Set<String> forgotten) {
        Map<String, Agent> byNode = new HashMap<>();
        Map<String, Sweep.Listing> answered = new LinkedHashMap<>();
        listed.forEach((agent, l) -> {
            byNode.put(agent.nodeId(), agent);
            Map<String, Instant> tombstones = new HashMap<>();
            l.getTombstonesList().forEach(t -> tombstones.put(t.getVolumeId(), Instant.ofEpochSecond(t.getDeletedAtUnixSeconds())));
            answered.put(agent.nodeId(), new Sweep.Listing(l.getEntriesList().stream().map(ReplicaEntry::getVolumeId)
                    .collect(java.util.stream.Collectors.toSet()), tombstones));
        });
        var plan = Sweep.plan(answered, forgotten, Instant.now(), Sweep.GRACE);
        for (var sweep : plan.sweeps()) {
            Agent node = byNode.get(sweep.nodeId());
            // the same key as a round: one operation per volume at a time; a failed sweep is tried again next tick
            if (!running.add(sweep.volumeId())) continue;
            var leftover = listed.get(node).getEntriesList().stream().filter(e -> e.getVolumeId().equals(sweep.volumeId())).findFirst();
            Thread.ofVirtual().name("csi4j-sweep-" + sweep.volumeId()).start(() -> {
                try {
                    // a primary deleted past its silence (its node back, maybe still staged): its writes stop first, as
                    // any superseded primary's do; the delete below is refused while staged and tried again next tick
                    leftover.filter(e -> e.getRole().equals("PRIMARY")).ifPresent(e -> node.call(a -> a.nodeAgent().fenceReplica(
                            FenceReplicaRequest.newBuilder().setVolumeId(e.getVolumeId()).setEpoch(e.getEpoch() + 1).build())));
                    node.call(a -> a.nodeAgent().deleteReplica(DeleteReplicaRequest.newBuilder().setVolumeId(sweep.volumeId())
                            .build()));
                    LOG.info(() -> "replication: swept the leftover of deleted volume " + sweep.volumeId() + " on " + node.nodeId());
                } catch (RuntimeException failed) {
                    LOG.warning(() -> "replication: sweeping deleted volume " + sweep.volumeId() + " on " + node.nodeId()
                            + " failed (tried again): " + failed.getMessage());
                } finally {
                    running.remove(sweep.volumeId());
                }
            });
        }
        for (var forget : plan.forgets()) {
            Agent node = byNode.get(forget.nodeId());
            try {
                node.call(a -> a.nodeAgent().withDeadlineAfter(ASK.toMillis(), TimeUnit.MILLISECONDS)
                        .forgetDeleted(ForgetDeletedRequest.newBuilder().setVolumeId(forget.volumeId()).build()));
            } catch (RuntimeException failed) {
                LOG.fine(() -> "replication: " + node.nodeId() + " kept its tombstone of " + forget.volumeId() + ": " + failed.getMessage());
            }
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

    /** An unconfirmed primary is confirmed when every node of its volume answered this tick ({@link Confirm}). */
    private void confirm(String volumeId, Map<Agent, ReplicaEntry> copies, Set<String> answered, boolean tombstoned) {
        var id = ReplicatedVolumeId.parse(volumeId);
        if (id.isEmpty()) return;
        Map<String, Agent> byNode = new HashMap<>();
        var listed = copies.entrySet().stream().map(c -> {
            byNode.put(c.getKey().nodeId(), c.getKey());
            var e = c.getValue();
            return new Confirm.Copy(c.getKey().nodeId(), e.getRole(), e.getEpoch(), e.getUnconfirmed());
        }).toList();
        Confirm.which(id.get(), answered, listed, tombstoned).ifPresent(copy -> {
            Agent node = byNode.get(copy.nodeId());
            try {
                var done = node.call(a -> a.nodeAgent().withDeadlineAfter(ASK.toMillis(), TimeUnit.MILLISECONDS)
                        .confirmPrimary(ConfirmPrimaryRequest.newBuilder().setVolumeId(volumeId).setEpoch(copy.epoch()).build()));
                LOG.info(() -> "replication: the primary of " + volumeId + " on node '" + copy.nodeId() + "' at epoch " + copy.epoch()
                        + (done.getConfirmed() ? " confirmed" : " changed since the listing: not confirmed"));
            } catch (RuntimeException failed) {
                LOG.info(() -> "replication: confirming " + volumeId + " on node '" + copy.nodeId() + "' failed (next tick retries): "
                        + failed.getMessage());
            }
        });
    }

    /**
     * Copies behind the primary of the highest epoch ({@link Follow}: the other secondaries after a failover, the fenced
     * old primary once nothing uses it) are told that epoch (NodeAgent.FollowReplica, durable on the agent) and get a
     * round at once, under the volume's one-operation key: the volume is protected again without waiting an interval.
     * A fenced copy its listing says is in use is not asked ({@link Follow}); one that refuses anyway (staged since its
     * listing) is asked again next tick.
     */
    private void follow(String volumeId, Map<Agent, ReplicaEntry> copies, boolean tombstoned) {
        var id = ReplicatedVolumeId.parse(volumeId);
        if (id.isEmpty()) return;
        Map<String, Agent> byNode = new HashMap<>();
        var listed = copies.entrySet().stream().map(c -> {
            byNode.put(c.getKey().nodeId(), c.getKey());
            var e = c.getValue();
            return new Confirm.Copy(c.getKey().nodeId(), e.getRole(), e.getEpoch(), e.getUnconfirmed(), e.getInUse());
        }).toList();
        var plan = Follow.which(id.get(), listed, tombstoned);
        for (var copy : plan.copies()) {
            Agent node = byNode.get(copy.nodeId());
            if (!running.add(volumeId)) return;                     // one operation per volume: the next tick tries again
            Thread.ofVirtual().name("csi4j-follow-" + volumeId).start(() -> {
                try {
                    var now = node.call(a -> a.nodeAgent().withDeadlineAfter(ASK.toMillis(), TimeUnit.MILLISECONDS)
                            .followReplica(FollowReplicaRequest.newBuilder().setVolumeId(volumeId).setEpoch(plan.epoch()).build()));
                    LOG.info(() -> "replication: the copy of " + volumeId + " on node '" + node.nodeId() + "' was " + copy.role()
                            + " at epoch " + copy.epoch() + ": now " + now.getRole() + " of epoch " + plan.epoch()
                            + (now.getPoint().isEmpty() ? ", holding no point" : ", holding " + now.getPoint()));
                    round(node, volumeId);
                } catch (RuntimeException failed) {
                    LOG.fine(() -> "replication: the copy of " + volumeId + " on node '" + node.nodeId() + "' does not follow epoch "
                            + plan.epoch() + " yet: " + failed.getMessage());
                } finally {
                    running.remove(volumeId);
                }
            });
        }
    }

    private void start(Agent secondary, String volumeId) {
        Thread.ofVirtual().name("csi4j-round-" + volumeId).start(() -> {
            try {
                round(secondary, volumeId);
            } finally {
                running.remove(volumeId);
            }
        });
    }

    /** One round of {@code secondary} from the current primary; a failure is logged and tried again when due. */
    private void round(Agent secondary, String volumeId) {
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
        }
    }

    @Override
    public void close() {
        loop.interrupt();
    }
}
