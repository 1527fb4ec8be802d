package io.csi4j.driver.cluster;

import io.csi4j.driver.id.ObjectId;
import io.csi4j.proto.cluster.CutGroupSnapshotRequest;
import io.csi4j.proto.cluster.CutGroupSnapshotResponse;
import io.csi4j.proto.cluster.FindGroupSnapshotRequest;
import io.csi4j.proto.cluster.FindGroupSnapshotResponse;
import io.csi4j.proto.cluster.FreezeVolumesRequest;
import io.csi4j.proto.cluster.ThawVolumesRequest;
import io.csi4j.proto.csi.DeleteVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.GetVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.Snapshot;
import io.csi4j.proto.csi.VolumeGroupSnapshot;
import io.csi4j.sdk.CsiException;
import com.google.protobuf.Timestamp;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.logging.Logger;
import io.grpc.StatusRuntimeException;
import java.util.Comparator;

/**
 * Group snapshots whose members live on several nodes, write-order consistent across them: every node
 * freezes its members, then every node cuts its part under that freeze, then every node thaws. Each node's
 * part is an ordinary group snapshot of its members under one cluster-wide id ({@code gsnap-<random>-_cluster}),
 * so the members' group_snapshot_id is the same on every node and a Get or Delete asks every node. A failure
 * at any step thaws everything and removes every part that was cut.
 */
final class CrossNodeGroupSnapshots {
    private static final Logger LOG = Logger.getLogger(CrossNodeGroupSnapshots.class.getName());
    /** How long an agent holds its members frozen at most if the thaw never comes (the controller died). */
    static final Duration HOLD = Duration.ofSeconds(10);

    private final Agents agents;

    CrossNodeGroupSnapshots(Agents agents) {
        this.agents = agents;
    }

    VolumeGroupSnapshot create(String name, List<String> sources, Map<Agent, List<String>> byNode) {
        agents.requireAllIdentified("a group snapshot that spans nodes");
        Map<Agent, FindGroupSnapshotResponse> held = new LinkedHashMap<>();
        Fanout.all(agents.nodes(), a -> a.nodeAgent().findGroupSnapshot(FindGroupSnapshotRequest.newBuilder().setName(name).build()))
                .fromAll().forEach((agent, found) -> { if (!found.getGroupSnapshotId().isEmpty()) held.put(agent, found); });
        if (!held.isEmpty()) {
            VolumeGroupSnapshot done = existing(name, sources, byNode, held);
            if (done != null) return done;
        }

        String id = ObjectId.clusterGroupSnapshot().toString();
        String holdId = UUID.randomUUID().toString();
        List<Agent> nodes = List.copyOf(byNode.keySet());
        Map<Agent, CutGroupSnapshotResponse> parts;
        try {
            Fanout.all(nodes, a -> a.nodeAgent().freezeVolumes(FreezeVolumesRequest.newBuilder().setHoldId(holdId)
                    .addAllVolumeIds(byNode.get(a)).setHoldMillis(HOLD.toMillis()).build())).fromAll();
            parts = Fanout.all(nodes, a -> a.nodeAgent().cutGroupSnapshot(CutGroupSnapshotRequest.newBuilder().setName(name)
                    .setGroupSnapshotId(id).addAllVolumeIds(byNode.get(a)).setHoldId(holdId).build())).fromAll();
        } catch (RuntimeException e) {
            thaw(nodes, holdId);
            removeParts(nodes, id, e);
            throw e;
        }
        thaw(nodes, holdId);
        List<VolumeGroupSnapshot> cut = parts.values().stream().map(CutGroupSnapshotResponse::getPart).toList();
        return merge(id, sources, cut);
    }

    /**
     * What nodes already hold under this name: the finished group snapshot (a retry), or null after removing a
     * partial one (a cut that a crash interrupted is not consistent with a new one). ALREADY_EXISTS when the name
     * belongs to a group snapshot of other volumes.
     */
    private VolumeGroupSnapshot existing(String name, List<String> sources, Map<Agent, List<String>> byNode,
                                         Map<Agent, FindGroupSnapshotResponse> held) {
        Set<String> ids = new HashSet<>();
        Set<String> heldSources = new HashSet<>();
        held.values().forEach(f -> { ids.add(f.getGroupSnapshotId()); heldSources.addAll(f.getSourceVolumeIdsList()); });
        String id = ids.iterator().next();
        boolean clusterWide = ids.size() == 1 && ObjectId.parse(ObjectId.Kind.GROUP_SNAPSHOT, id).map(ObjectId::clusterWide).orElse(false);
        if (!clusterWide || !new HashSet<>(sources).containsAll(heldSources)) {
            throw CsiException.alreadyExists("group snapshot '" + name + "' already exists (" + String.join(", ", ids)
                    + ") for source volumes " + heldSources.stream().sorted().toList());
        }
        // complete: every source has its member in one ready part, wherever it was cut (a replicated member's primary
        // may have moved since: its part stays on the node that cut it)
        int members = held.values().stream().mapToInt(FindGroupSnapshotResponse::getSourceVolumeIdsCount).sum();
        boolean complete = held.values().stream().allMatch(FindGroupSnapshotResponse::getReady)
                && heldSources.equals(new HashSet<>(sources)) && members == sources.size();
        if (complete) return get(id, List.of());
        LOG.warning("group snapshot '" + name + "' (" + id + ") is cut on " + held.keySet() + " only; removing it to cut it again");
        Fanout.all(List.copyOf(held.keySet()), a -> a.groupController().deleteVolumeGroupSnapshot(
                DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(id).build())).fromAll();
        return null;
    }

    /** A group snapshot of this name on some node: the node that holds (a part of) it, and its id. */
    record Named(Agent node, String groupSnapshotId) {
        boolean clusterWide() {
            return ObjectId.parse(ObjectId.Kind.GROUP_SNAPSHOT, groupSnapshotId).map(ObjectId::clusterWide).orElse(false);
        }
    }

    /**
     * The group snapshot named {@code name} on any node that answers, if any: a group with a replicated member
     * retried after a handoff is answered where it was cut, not cut again on the new primary. Silent nodes are not
     * waited for (their parts, if any, are found by the cross-node path, which needs every node).
     */
    java.util.Optional<Named> named(String name) {
        if (name.isEmpty()) return java.util.Optional.empty();
        var answers = Fanout.all(agents.nodes(), a -> a.nodeAgent().findGroupSnapshot(FindGroupSnapshotRequest.newBuilder().setName(name).build()));
        return answers.results().entrySet().stream().filter(e -> !e.getValue().getGroupSnapshotId().isEmpty())
                .map(e -> new Named(e.getKey(), e.getValue().getGroupSnapshotId())).findFirst();
    }

    VolumeGroupSnapshot get(String id, List<String> snapshotIds) {
        agents.requireAllIdentified("group snapshot " + id);
        List<VolumeGroupSnapshot> parts = new ArrayList<>();
        Fanout.all(agents.nodes(), a -> {
            try {
                return a.groupController().getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(id).build())
                        .getGroupSnapshot();
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() == Status.Code.NOT_FOUND) return null;  // no part on that node
                throw e;
            }
        }).fromAll().values().forEach(p -> { if (p != null) parts.add(p); });
        if (parts.isEmpty()) throw CsiException.notFound("group snapshot " + id + " does not exist");
        VolumeGroupSnapshot merged = merge(id, List.of(), parts);
        checkSnapshotList(merged, snapshotIds);
        return merged;
    }

    void delete(String id, List<String> snapshotIds) {
        if (!snapshotIds.isEmpty()) {
            try {
                checkSnapshotList(get(id, List.of()), snapshotIds);
            } catch (CsiException e) {
                if (e.code() == Status.Code.NOT_FOUND) return;
                throw e;
            }
        }
        agents.requireAllIdentified("group snapshot " + id);
        Fanout.all(agents.nodes(), a -> a.groupController().deleteVolumeGroupSnapshot(
                DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(id).build())).fromAll();
    }

    /** One group snapshot of the parts: members in source order (when known), the latest part's time. */
    private static VolumeGroupSnapshot merge(String id, List<String> sources, List<VolumeGroupSnapshot> parts) {
        List<Snapshot> members = new ArrayList<>();
        parts.forEach(p -> members.addAll(p.getSnapshotsList()));
        if (!sources.isEmpty()) members.sort(Comparator.comparingInt(s -> sources.indexOf(s.getSourceVolumeId())));
        Timestamp latest = parts.stream().map(VolumeGroupSnapshot::getCreationTime)
                .max(Comparator.comparingLong(Timestamp::getSeconds).thenComparingInt(Timestamp::getNanos)).orElseThrow();
        return VolumeGroupSnapshot.newBuilder().setGroupSnapshotId(id).addAllSnapshots(members).setCreationTime(latest)
                .setReadyToUse(parts.stream().allMatch(VolumeGroupSnapshot::getReadyToUse)).build();
    }

    /** A snapshot_ids list that is given must be exactly the group's members (INVALID_ARGUMENT otherwise). */
    private static void checkSnapshotList(VolumeGroupSnapshot g, List<String> snapshotIds) {
        if (snapshotIds.isEmpty()) return;
        Set<String> actual = new HashSet<>();
        g.getSnapshotsList().forEach(s -> actual.add(s.getSnapshotId()));
        if (!actual.equals(new HashSet<>(snapshotIds))) {
            throw CsiException.invalidArgument("snapshot_ids " + snapshotIds + " do not match the members of group snapshot "
                    + g.getGroupSnapshotId() + ": " + actual);
        }
    }

    private static void thaw(List<Agent> nodes, String holdId) {
        Fanout.each(nodes, a -> {
            try {
                a.call(x -> x.nodeAgent().thawVolumes(ThawVolumesRequest.newBuilder().setHoldId(holdId).build()));
            } catch (RuntimeException e) {
                LOG.warning("thawing hold " + holdId + " on " + a + ": " + e.getMessage() + " (it lapses by itself within " + HOLD + ")");
            }
            return null;
        });
    }

    private static void removeParts(List<Agent> nodes, String id, RuntimeException cause) {
        Fanout.each(nodes, a -> {
            try {
                a.call(x -> x.groupController().deleteVolumeGroupSnapshot(
                        DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(id).build()));
            } catch (RuntimeException e) {
                cause.addSuppressed(new IllegalStateException("removing the part of " + id + " on " + a + ": " + e.getMessage()));
            }
            return null;
        });
    }
}
