package io.csi4j.cli.reliability;

import io.csi4j.proto.addons.volumegroup.CreateVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.DeleteVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.ModifyVolumeGroupMembershipRequest;
import io.csi4j.proto.csi.ControllerExpandVolumeRequest;
import io.csi4j.proto.csi.ControllerModifyVolumeRequest;
import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteSnapshotRequest;
import io.csi4j.proto.csi.DeleteVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.NodeExpandVolumeRequest;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.proto.csi.Snapshot;
import io.csi4j.proto.csi.VolumeContentSource;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.function.Predicate;

/**
 * One client's objects and what it was told about them: the harness's model. Operations are
 * re-runnable (a CO retries an unanswered call with the same arguments) and update the model
 * only once every RPC in them has answered OK, so after a successful retry the model is exact.
 */
final class World {

    /** Undoes everything the worlds own through the plugin, node side first: what every suite's tear-down does. */
    static void deleteEverything(List<World> worlds, Rpc rpc) throws IOException {
        for (World w : worlds) {
            for (Vol v : List.copyOf(w.volumes.values())) {
                if (v.published) w.unpublish(v).step().run(rpc);
                if (v.staged) w.unstage(v).step().run(rpc);
                if (v.attached) w.detach(v).step().run(rpc);
            }
            for (var g : List.copyOf(w.groupSnapshots.values())) w.deleteGroupSnapshot(g).step().run(rpc);
            for (var snap : List.copyOf(w.snapshots.values())) w.deleteSnapshot(snap).step().run(rpc);
            for (var g : List.copyOf(w.groups.values())) w.deleteGroup(g).step().run(rpc);
            for (Vol v : List.copyOf(w.volumes.values())) w.deleteVolume(v).step().run(rpc);
        }
    }
    static final long VOLUME_BYTES = 320L << 20;   // xfs needs 300 MiB
    static final String DATA_FILE = "data.txt";
    static final String NODE = "node-1";

    /** One re-runnable step of a CO: one or more RPCs, then the model update. */
    interface Step {
        void run(Rpc rpc) throws IOException;
    }

    record Op(String label, Step step) {}

    static final class Vol {
        final String name;
        String id;
        long capacity;
        String data;           // what data.txt holds, null: no file
        boolean attached, staged, published;
        String group;          // volume group id, or null
        String readAheadKiB;   // the last ModifyVolume readAheadKiB answered OK, or null

        Vol(String name) { this.name = name; }
    }

    record Snap(String name, String id, long size, String data) {}

    record GroupSnap(String name, String id, Map<String, Snap> members) {}

    record Group(String name, String id, Set<String> members) {}

    final String prefix;
    final Path nodeDir;
    final Random random;
    final Map<String, Vol> volumes = new LinkedHashMap<>();
    final Map<String, Snap> snapshots = new LinkedHashMap<>();
    final Map<String, GroupSnap> groupSnapshots = new LinkedHashMap<>();
    final Map<String, Group> groups = new LinkedHashMap<>();
    Op pending;
    /** The last operations of this client with their outcome (OK, no answer, status): for a failure's report. */
    final java.util.Deque<String> history = new java.util.ArrayDeque<>();
    private int counter;

    void record(String event) {
        if (history.size() == 40) history.removeFirst();
        history.addLast(event);
    }

    World(String prefix, Path nodeDir, long seed) {
        this.prefix = prefix;
        this.nodeDir = nodeDir;
        this.random = new Random(seed);
    }

    Path staging(Vol v) { return nodeDir.resolve(v.name).resolve("staging"); }

    Path target(Vol v) { return nodeDir.resolve(v.name).resolve("target"); }

    /** A random operation that is valid in the current model. */
    Op next(boolean volumeGroups) {
        List<Op> candidates = new ArrayList<>();
        if (volumes.size() < 4) {
            candidates.add(createVolume(VolumeContentSource.getDefaultInstance(), null, VOLUME_BYTES));
            pick(snapshots.values()).ifPresent(s -> candidates.add(createVolume(
                    VolumeContentSource.newBuilder().setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(s.id)).build(),
                    s.data, s.size)));
            pickVol(v -> true).ifPresent(v -> candidates.add(createVolume(
                    VolumeContentSource.newBuilder().setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(v.id)).build(),
                    v.data, v.capacity)));
        }
        pickVol(v -> !v.attached && !v.staged && v.group == null).ifPresent(v -> candidates.add(deleteVolume(v)));
        pickVol(v -> !v.attached).ifPresent(v -> candidates.add(attach(v)));
        pickVol(v -> v.attached && !v.staged).ifPresent(v -> candidates.add(stage(v)));
        pickVol(v -> v.staged && !v.published).ifPresent(v -> candidates.add(publish(v)));
        pickVol(v -> v.published).ifPresent(v -> candidates.add(write(v)));
        pickVol(v -> v.published).ifPresent(v -> candidates.add(unpublish(v)));
        pickVol(v -> v.staged && !v.published).ifPresent(v -> candidates.add(unstage(v)));
        pickVol(v -> v.attached && !v.staged).ifPresent(v -> candidates.add(detach(v)));
        pickVol(v -> v.capacity < VOLUME_BYTES + (256L << 20) && (v.published || !v.staged)).ifPresent(v -> candidates.add(expand(v)));
        pickVol(v -> true).ifPresent(v -> candidates.add(modify(v)));
        if (snapshots.size() < 3) pickVol(v -> true).ifPresent(v -> candidates.add(snapshot(v)));
        pick(snapshots.values()).ifPresent(s -> candidates.add(deleteSnapshot(s)));
        var distinct = volumes.values().stream().filter(v -> v.id != null).toList();
        if (groupSnapshots.isEmpty() && distinct.size() >= 2) {
            candidates.add(groupSnapshot(distinct.get(0), distinct.get(1)));
        }
        pick(groupSnapshots.values()).ifPresent(g -> candidates.add(deleteGroupSnapshot(g)));
        if (volumeGroups) {
            if (groups.isEmpty()) pickVol(v -> v.group == null).ifPresent(v -> candidates.add(createGroup(v)));
            pick(groups.values()).ifPresent(g -> {
                pickVol(v -> v.group == null).ifPresent(v -> candidates.add(setMembers(g, plus(g.members, v.id))));
                if (!g.members.isEmpty() && random.nextBoolean()) {
                    candidates.add(setMembers(g, minus(g.members, g.members.iterator().next())));
                }
                boolean idle = g.members.stream().map(this::byId).allMatch(v -> !v.attached && !v.staged);
                if (idle) candidates.add(deleteGroup(g));
            });
        }
        return candidates.get(random.nextInt(candidates.size()));
    }

    // ---- operations ----

    Op createVolume(VolumeContentSource source, String data, long bytes) {
        Vol v = new Vol(prefix + "-v" + (++counter));
        String label = "CreateVolume " + v.name + (source.hasSnapshot() ? " from " + source.getSnapshot().getSnapshotId()
                : source.hasVolume() ? " from " + source.getVolume().getVolumeId() : "");
        return new Op(label, rpc -> {
            var request = CreateVolumeRequest.newBuilder().setName(v.name).setCapacityRange(Rpc.atLeast(bytes))
                    .addVolumeCapabilities(Rpc.mountXfs());
            if (source.hasSnapshot() || source.hasVolume()) request.setVolumeContentSource(source);
            var volume = rpc.controller().createVolume(request.build()).getVolume();
            v.id = volume.getVolumeId();
            v.capacity = volume.getCapacityBytes();
            v.data = data;
            volumes.put(v.name, v);
            record(v.name + " is " + v.id + ", " + v.capacity + " bytes");   // labels name a new volume, a diagnosis needs its id
        });
    }

    Op deleteVolume(Vol v) {
        return new Op("DeleteVolume " + v.id, rpc -> {
            rpc.controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v.id).build());
            volumes.remove(v.name);
        });
    }

    Op attach(Vol v) {
        return new Op("ControllerPublishVolume " + v.id, rpc -> {
            rpc.controller().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(v.id)
                    .setNodeId(NODE).setVolumeCapability(Rpc.mountXfs()).build());
            v.attached = true;
        });
    }

    Op detach(Vol v) {
        return new Op("ControllerUnpublishVolume " + v.id, rpc -> {
            rpc.controller().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(v.id)
                    .setNodeId(NODE).build());
            v.attached = false;
        });
    }

    Op stage(Vol v) {
        return new Op("NodeStageVolume " + v.id, rpc -> {
            Files.createDirectories(staging(v));
            rpc.node().nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(v.id)
                    .setStagingTargetPath(staging(v).toString()).setVolumeCapability(Rpc.mountXfs()).build());
            v.staged = true;
        });
    }

    Op unstage(Vol v) {
        return new Op("NodeUnstageVolume " + v.id, rpc -> {
            rpc.node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(v.id)
                    .setStagingTargetPath(staging(v).toString()).build());
            v.staged = false;
        });
    }

    Op publish(Vol v) {
        return new Op("NodePublishVolume " + v.id, rpc -> {
            rpc.node().nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(v.id)
                    .setStagingTargetPath(staging(v).toString()).setTargetPath(target(v).toString())
                    .setVolumeCapability(Rpc.mountXfs()).build());
            v.published = true;
        });
    }

    Op unpublish(Vol v) {
        return new Op("NodeUnpublishVolume " + v.id, rpc -> {
            rpc.node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(v.id)
                    .setTargetPath(target(v).toString()).build());
            v.published = false;
        });
    }

    /** The workload writes (no RPC): a new generation of the volume's data, durable before it counts. */
    Op write(Vol v) {
        String data = v.name + ":" + (++counter);
        return new Op("write " + v.id, rpc -> {
            try (FileChannel file = FileChannel.open(target(v).resolve(DATA_FILE), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                file.write(ByteBuffer.wrap(data.getBytes(StandardCharsets.UTF_8)));
                file.force(true);
            }
            v.data = data;
        });
    }

    Op expand(Vol v) {
        long wanted = v.capacity + (64L << 20);
        return new Op("ControllerExpandVolume " + v.id + " to " + wanted, rpc -> {
            var answer = rpc.controller().controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(v.id)
                    .setCapacityRange(Rpc.atLeast(wanted)).setVolumeCapability(Rpc.mountXfs()).build());
            if (answer.getCapacityBytes() < wanted) throw new IllegalStateException("expanded to " + answer.getCapacityBytes() + " < " + wanted);
            if (v.published) {
                rpc.node().nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(v.id)
                        .setVolumePath(target(v).toString()).setStagingTargetPath(staging(v).toString())
                        .setCapacityRange(Rpc.atLeast(wanted)).setVolumeCapability(Rpc.mountXfs()).build());
            }
            v.capacity = answer.getCapacityBytes();
        });
    }

    Op modify(Vol v) {
        String readAhead = String.valueOf(128 << random.nextInt(4));
        return new Op("ControllerModifyVolume " + v.id, rpc -> {
            rpc.controller().controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(v.id)
                    .putMutableParameters("readAheadKiB", readAhead).build());
            v.readAheadKiB = readAhead;
        });
    }

    Op snapshot(Vol v) {
        String name = prefix + "-s" + (++counter);
        return new Op("CreateSnapshot " + name + " of " + v.id, rpc -> {
            Snapshot s = rpc.controller().createSnapshot(CreateSnapshotRequest.newBuilder().setName(name)
                    .setSourceVolumeId(v.id).build()).getSnapshot();
            if (!s.getReadyToUse()) throw new IllegalStateException("snapshot " + s.getSnapshotId() + " not ready to use");
            snapshots.put(name, new Snap(name, s.getSnapshotId(), s.getSizeBytes(), v.data));
        });
    }

    Op deleteSnapshot(Snap s) {
        return new Op("DeleteSnapshot " + s.id, rpc -> {
            rpc.controller().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(s.id).build());
            snapshots.remove(s.name);
        });
    }

    Op groupSnapshot(Vol a, Vol b) {
        String name = prefix + "-g" + (++counter);
        return new Op("CreateVolumeGroupSnapshot " + name + " of " + a.id + "," + b.id, rpc -> {
            var g = rpc.groups().createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder().setName(name)
                    .addSourceVolumeIds(a.id).addSourceVolumeIds(b.id).build()).getGroupSnapshot();
            Map<String, Snap> members = new LinkedHashMap<>();
            for (Snapshot s : g.getSnapshotsList()) {
                Vol source = byId(s.getSourceVolumeId());
                members.put(s.getSnapshotId(), new Snap(name, s.getSnapshotId(), s.getSizeBytes(), source.data));
            }
            if (members.size() != 2) throw new IllegalStateException("group snapshot " + g.getGroupSnapshotId() + " has " + members.size() + " members");
            groupSnapshots.put(name, new GroupSnap(name, g.getGroupSnapshotId(), members));
        });
    }

    Op deleteGroupSnapshot(GroupSnap g) {
        return new Op("DeleteVolumeGroupSnapshot " + g.id, rpc -> {
            rpc.groups().deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(g.id)
                    .addAllSnapshotIds(g.members.keySet()).build());
            groupSnapshots.remove(g.name);
        });
    }

    Op createGroup(Vol v) {
        String name = prefix + "-vg" + (++counter);
        return new Op("CreateVolumeGroup " + name + " with " + v.id, rpc -> {
            var g = rpc.volumeGroups().createVolumeGroup(CreateVolumeGroupRequest.newBuilder().setName(name)
                    .addVolumeIds(v.id).build()).getVolumeGroup();
            groups.put(name, new Group(name, g.getVolumeGroupId(), new LinkedHashSet<>(List.of(v.id))));
            v.group = g.getVolumeGroupId();
        });
    }

    Op setMembers(Group g, Set<String> members) {
        return new Op("ModifyVolumeGroupMembership " + g.id + " to " + members, rpc -> {
            rpc.volumeGroups().modifyVolumeGroupMembership(ModifyVolumeGroupMembershipRequest.newBuilder()
                    .setVolumeGroupId(g.id).addAllVolumeIds(members).build());
            for (String id : g.members) byId(id).group = null;
            for (String id : members) byId(id).group = g.id;
            g.members.clear();
            g.members.addAll(members);
        });
    }

    Op deleteGroup(Group g) {
        return new Op("DeleteVolumeGroup " + g.id, rpc -> {
            rpc.volumeGroups().deleteVolumeGroup(DeleteVolumeGroupRequest.newBuilder().setVolumeGroupId(g.id).build());
            volumes.values().removeIf(v -> g.id.equals(v.group));   // the seed policy deletes the members
            groups.remove(g.name);
        });
    }

    // ---- model queries ----

    Vol byId(String id) {
        return volumes.values().stream().filter(v -> id.equals(v.id)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no volume " + id + " in the model of " + prefix));
    }

    /** Every snapshot id the plugin must list for this client: its own and group members. */
    Set<String> snapshotIds() {
        Set<String> ids = new LinkedHashSet<>();
        snapshots.values().forEach(s -> ids.add(s.id));
        groupSnapshots.values().forEach(g -> ids.addAll(g.members.keySet()));
        return ids;
    }

    private Optional<Vol> pickVol(Predicate<Vol> filter) {
        return pick(volumes.values().stream().filter(filter).toList());
    }

    private <T> Optional<T> pick(java.util.Collection<T> items) {
        if (items.isEmpty()) return Optional.empty();
        var list = List.copyOf(items);
        return Optional.of(list.get(random.nextInt(list.size())));
    }

    private static Set<String> plus(Set<String> set, String id) {
        var copy = new LinkedHashSet<>(set);
        copy.add(id);
        return copy;
    }

    private static Set<String> minus(Set<String> set, String id) {
        var copy = new LinkedHashSet<>(set);
        copy.remove(id);
        return copy;
    }
}
