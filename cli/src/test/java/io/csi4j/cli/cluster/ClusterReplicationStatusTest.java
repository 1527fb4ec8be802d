package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.util.JsonFormat;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.cluster.GetClusterStatusResponse;
import io.csi4j.proto.cluster.ReplicatedVolumeStatus;
import io.csi4j.proto.cluster.SecondaryStatus;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.ControllerExpandVolumeRequest;
import io.csi4j.proto.csi.ControllerGetVolumeRequest;
import io.csi4j.proto.csi.ControllerModifyVolumeRequest;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.NodeGetVolumeStatsRequest;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.proto.csi.VolumeCondition;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 28, observability (docs/replication.md, "Observability" and "Volume condition"), with real processes: two
 * image-engine agents over mutual TLS on loopback and a controller, a two-replica volume at the shortest interval (5 s),
 * staged and published on its primary. {@code csi4j cluster status} shows the primary, its epoch and the secondary's
 * last round; SIGSTOP of the secondary's agent makes the volume's condition abnormal, naming the secondary and how far
 * behind it is, through ControllerGetVolume (controller) and NodeGetVolumeStats (the primary's node), and status shows
 * it silent; SIGCONT makes it normal again after its next round.
 */
class ClusterReplicationStatusTest {
    private static final List<String> NODES = List.of("node-a", "node-b");
    private static final long MIB = 1L << 20;
    /** Two intervals (10 s) plus a round, a heartbeat and a loaded machine's slack: bounded, never tight. */
    private static final long WITHIN_SECONDS = 90;

    @TempDir
    static Path tmp;
    static ProcessCluster cluster;
    static ControllerGrpc.ControllerBlockingStub csi;

    @BeforeAll
    static void start() throws Exception {
        Privileged.requireRoot();
        var flags = List.of("--engine", "image", "--pool-size", "1G", "--copy-bandwidth", "64M");
        cluster = ProcessCluster.start(tmp, NODES, flags, List.of());
        csi = ControllerGrpc.newBlockingStub(cluster.controllerChannel());
    }

    @AfterAll
    static void stop() throws Exception {
        NODE_CHANNELS.values().forEach(ManagedChannel::shutdownNow);
        // a failed test's mounts (targets before stagings), so the agents' pools can go
        for (String prefix : List.of("target-", "staging-")) {
            for (String line : Files.readAllLines(Path.of("/proc/mounts"))) {
                String point = line.split(" ")[1];
                if (point.startsWith(tmp.resolve(prefix).toString())) new ProcessBuilder("umount", point).inheritIO().start().waitFor();
            }
        }
        if (cluster != null) cluster.close();
    }

    static String create(String name, String interval) {
        return csi.withDeadlineAfter(120, TimeUnit.SECONDS).createVolume(CreateVolumeRequest.newBuilder().setName(name)
                .addVolumeCapabilities(ext4()).setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(64 * MIB))
                .putParameters("csi4j.io/replicas", "2").putParameters("csi4j.io/replication-interval", interval).build())
                .getVolume().getVolumeId();
    }

    @Test
    void statusShowsEachSecondaryAndAStoppedOneMakesTheVolumeAbnormalUntilItsNextRound() throws Exception {
        String id = create("rep-status", "5s");
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String primary = parsed.tags().get(0);
        String secondary = parsed.tags().get(1);
        var node = node(primary);
        Path target = publishOn(primary, id);
        Files.writeString(target.resolve("hello"), "replicated\n");
        // a round completes: status shows the primary, epoch 1 and the secondary's round; both conditions normal
        var inSync = await(cluster, id, v -> v.getSecondariesCount() == 1 && v.getSecondaries(0).getState() == SecondaryStatus.State.IN_SYNC);
        assertEquals(primary, inSync.getPrimaryNodeId());
        assertEquals(1, inSync.getEpoch());
        assertEquals(5000, inSync.getIntervalMillis());
        assertFalse(inSync.getAbnormal(), inSync.getMessage());
        SecondaryStatus s = inSync.getSecondaries(0);
        assertEquals(secondary, s.getNodeId());
        assertEquals("SECONDARY", s.getRole());
        assertTrue(s.getHasRound() && s.getLastRoundBytes() > 0 && s.getLastRoundMillis() > 0 && s.getLastSyncUnixMillis() > 0, s.toString());
        assertTrue(s.getLagMillis() >= 0 && s.getLagMillis() < 60_000, s.toString());
        assertFalse(getCondition(csi, id).getAbnormal(), getCondition(csi, id).getMessage());
        assertFalse(statsCondition(node, id, target).getAbnormal());

        // the human output: the volume's row names both nodes, the secondary in sync, the volume healthy
        var table = ClusterStatusTest.cli("cluster", "status", "--endpoint", cluster.controllerSocket());
        System.out.println(table.out());
        assertEquals(0, table.exit(), table.err());
        String row = table.out().lines().filter(l -> l.startsWith(id)).findFirst().orElseThrow(() -> new AssertionError(table.out()));
        assertTrue(row.contains(primary) && row.contains(secondary) && row.contains("in_sync") && row.contains("healthy"), row);

        var b = cluster.agent(secondary);
        b.child.signal("STOP");
        long stopped = System.nanoTime();
        try {
            VolumeCondition abnormal = awaitCondition(() -> getCondition(csi, id), true);
            double seconds = (System.nanoTime() - stopped) / 1e9;
            System.out.printf("secondary's agent stopped: ControllerGetVolume abnormal after %.1f s: %s%n", seconds, abnormal.getMessage());
            assertTrue(abnormal.getMessage().contains("node '" + secondary + "'") && abnormal.getMessage().contains("s behind"),
                    abnormal.getMessage());
            VolumeCondition onNode = statsCondition(node, id, target);
            assertTrue(onNode.getAbnormal(), onNode.getMessage());
            assertTrue(onNode.getMessage().contains("node '" + secondary + "'"), onNode.getMessage());

            var silent = await(cluster, id, v -> v.getSecondaries(0).getState() == SecondaryStatus.State.SILENT);
            assertTrue(silent.getAbnormal() && silent.getMessage().contains("node '" + secondary + "'"), silent.getMessage());
            assertEquals(primary, silent.getPrimaryNodeId());
        } finally {
            b.child.signal("CONT");
        }
        long resumed = System.nanoTime();
        VolumeCondition normal = awaitCondition(() -> getCondition(csi, id), false);
        System.out.printf("secondary's agent resumed: ControllerGetVolume normal after %.1f s%n", (System.nanoTime() - resumed) / 1e9);
        assertFalse(normal.getAbnormal(), normal.getMessage());
        assertFalse(statsCondition(node, id, target).getAbnormal());
        var back = await(cluster, id, v -> v.getSecondaries(0).getState() == SecondaryStatus.State.IN_SYNC);
        assertFalse(back.getAbnormal(), back.getMessage());

        unpublishFrom(primary, id);
        csi.withDeadlineAfter(120, TimeUnit.SECONDS).deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        var after = status(cluster);
        assertTrue(after.getVolumesList().stream().noneMatch(v -> v.getVolumeId().equals(id)), after.toString());
    }

    /**
     * ControllerModifyVolume of {@code csi4j.io/replication-interval} (a VolumeAttributesClass) reaches every replica: a
     * volume made with an interval of an hour gets its first round within seconds of the change to 5 s, which only the
     * secondary's agent counts; status shows the new interval on every node (it shows the longest any node answers).
     * A bad value and a change of {@code csi4j.io/replicas} are INVALID_ARGUMENT and change nothing.
     */
    @Test
    void aModifiedIntervalReachesEveryReplicaAndTheReplicaCountCannotChange() throws Exception {
        String id = create("rep-modify", "1h");
        var before = await(cluster, id, v -> v.getSecondariesCount() == 1);
        assertEquals(3_600_000, before.getIntervalMillis());
        assertEquals(SecondaryStatus.State.NO_ROUND_YET, before.getSecondaries(0).getState());

        for (var bad : List.of(java.util.Map.of("csi4j.io/replication-interval", "3s"),
                java.util.Map.of("csi4j.io/replication-interval", "soon"),
                java.util.Map.of("csi4j.io/replicas", "3"),
                java.util.Map.of("csi4j.io/replicas", "2", "csi4j.io/replication-interval", "5s"))) {
            var e = assertThrows(StatusRuntimeException.class, () -> modify(id, bad));
            assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), bad + ": " + e.getStatus());
            assertTrue(e.getStatus().getDescription().contains(bad.containsKey("csi4j.io/replicas") ? "csi4j.io/replicas"
                    : "csi4j.io/replication-interval"), e.getStatus().getDescription());
        }
        assertEquals(3_600_000, await(cluster, id, v -> true).getIntervalMillis(), "a refused change changed nothing");

        long changed = System.currentTimeMillis();
        modify(id, java.util.Map.of("csi4j.io/replication-interval", "5s"));
        modify(id, java.util.Map.of("csi4j.io/replication-interval", "5s"));                // idempotent
        var after = await(cluster, id, v -> v.getSecondaries(0).getState() == SecondaryStatus.State.IN_SYNC);
        System.out.printf("interval changed to 5s: first round done %.1f s later%n", (after.getSecondaries(0).getLastSyncUnixMillis() - changed) / 1e3);
        assertEquals(5000, after.getIntervalMillis());
        assertTrue(after.getSecondaries(0).getLastSyncUnixMillis() >= changed);
        csi.withDeadlineAfter(120, TimeUnit.SECONDS).deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
    }

    /**
     * An expansion goes to the primary (ControllerExpandVolume; the filesystem grows at its next stage there); the next point
     * carries the new size, and the copy that takes it records it: after a handoff the volume has the expanded capacity
     * and the grown filesystem on the new node, with its data.
     */
    @Test
    void aHandoffAfterAnExpansionServesTheExpandedSizeOnTheNewNode() throws Exception {
        String id = create("rep-expand", "5s");
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String primary = parsed.tags().get(0);
        String secondary = parsed.tags().get(1);
        Path target = publishOn(primary, id);
        Files.writeString(target.resolve("before-expansion"), "64 MiB\n");
        unpublishFrom(primary, id);
        // offline, as Kubernetes expands a volume no pod uses (and online ext4 growth needs CAP_SYS_RESOURCE, which a
        // test machine's container may lack): the next stage grows the filesystem
        var grown = csi.withDeadlineAfter(120, TimeUnit.SECONDS).controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder()
                .setVolumeId(id).setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(128 * MIB)).build());
        assertEquals(128 * MIB, grown.getCapacityBytes());
        target = publishOn(primary, id);                                      // the stage grows it
        long fsOnPrimary = Files.getFileStore(target).getTotalSpace();
        assertTrue(fsOnPrimary > 100 * MIB, "filesystem on the primary: " + fsOnPrimary);
        Files.writeString(target.resolve("after-expansion"), "128 MiB\n");
        long expanded = System.currentTimeMillis();
        // a periodic round after the expansion (it started after it: its point has the new size)
        await(cluster, id, v -> v.getSecondaries(0).getHasRound()
                && v.getSecondaries(0).getLastSyncUnixMillis() - v.getSecondaries(0).getLastRoundMillis() > expanded);
        unpublishFrom(primary, id);

        csi.withDeadlineAfter(120, TimeUnit.SECONDS).controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder()
                .setVolumeId(id).setNodeId(secondary).setVolumeCapability(ext4()).build());   // the handoff
        assertEquals(128 * MIB, csi.withDeadlineAfter(60, TimeUnit.SECONDS).controllerGetVolume(ControllerGetVolumeRequest.newBuilder()
                .setVolumeId(id).build()).getVolume().getCapacityBytes(), "the capacity after the handoff");
        Path moved = publishOn(secondary, id);
        long fsOnNew = Files.getFileStore(moved).getTotalSpace();
        System.out.printf("after expansion and handoff: filesystem %d bytes on the new node (%d on the old)%n", fsOnNew, fsOnPrimary);
        assertEquals(fsOnPrimary, fsOnNew, "the grown filesystem");
        assertEquals("64 MiB\n", Files.readString(moved.resolve("before-expansion")));
        assertEquals("128 MiB\n", Files.readString(moved.resolve("after-expansion")));
        unpublishFrom(secondary, id);
        csi.withDeadlineAfter(120, TimeUnit.SECONDS).deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
    }

    private static void modify(String id, java.util.Map<String, String> parameters) {
        csi.withDeadlineAfter(120, TimeUnit.SECONDS).controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(id)
                .putAllMutableParameters(parameters).build());
    }

    private static final java.util.Map<String, ManagedChannel> NODE_CHANNELS = new java.util.concurrent.ConcurrentHashMap<>();

    private static NodeGrpc.NodeBlockingStub node(String nodeId) {
        return NodeGrpc.newBlockingStub(NODE_CHANNELS.computeIfAbsent(nodeId,
                n -> Channels.connect(Endpoint.parse("unix://" + tmp.resolve(n).resolve("csi.sock")))));
    }

    /** ControllerPublishVolume, stage and publish on {@code nodeId}: the mounted target. */
    private static Path publishOn(String nodeId, String id) throws Exception {
        Path staging = Files.createDirectories(tmp.resolve("staging-" + nodeId).resolve(id));
        Path target = tmp.resolve("target-" + nodeId).resolve(id);
        Files.createDirectories(target.getParent());
        csi.withDeadlineAfter(120, TimeUnit.SECONDS).controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder()
                .setVolumeId(id).setNodeId(nodeId).setVolumeCapability(ext4()).build());
        node(nodeId).withDeadlineAfter(120, TimeUnit.SECONDS).nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(staging.toString()).setVolumeCapability(ext4()).build());
        node(nodeId).withDeadlineAfter(120, TimeUnit.SECONDS).nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(staging.toString()).setTargetPath(target.toString()).setVolumeCapability(ext4()).build());
        return target;
    }

    private static void unpublishFrom(String nodeId, String id) {
        node(nodeId).withDeadlineAfter(60, TimeUnit.SECONDS).nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id)
                .setTargetPath(tmp.resolve("target-" + nodeId).resolve(id).toString()).build());
        node(nodeId).withDeadlineAfter(60, TimeUnit.SECONDS).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(tmp.resolve("staging-" + nodeId).resolve(id).toString()).build());
        csi.withDeadlineAfter(60, TimeUnit.SECONDS).controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder()
                .setVolumeId(id).setNodeId(nodeId).build());
    }

    private static VolumeCapability ext4() {
        return VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.newBuilder().setFsType("ext4"))
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
    }

    private static VolumeCondition getCondition(ControllerGrpc.ControllerBlockingStub csi, String id) {
        return csi.withDeadlineAfter(60, TimeUnit.SECONDS).controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build())
                .getStatus().getVolumeCondition();
    }

    private static VolumeCondition statsCondition(NodeGrpc.NodeBlockingStub node, String id, Path target) {
        return node.withDeadlineAfter(60, TimeUnit.SECONDS).nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(id)
                .setVolumePath(target.toString()).build()).getVolumeCondition();
    }

    /** The machine output of {@code csi4j cluster status -o json}, parsed. */
    private static GetClusterStatusResponse status(ProcessCluster cluster) throws Exception {
        var run = ClusterStatusTest.cli("cluster", "status", "--endpoint", cluster.controllerSocket(), "-o", "json");
        var builder = GetClusterStatusResponse.newBuilder();
        JsonFormat.parser().merge(run.out(), builder);
        return builder.build();
    }

    private static ReplicatedVolumeStatus await(ProcessCluster cluster, String id, Predicate<ReplicatedVolumeStatus> done) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WITHIN_SECONDS);
        ReplicatedVolumeStatus last = null;
        while (System.nanoTime() < deadline) {
            last = status(cluster).getVolumesList().stream().filter(v -> v.getVolumeId().equals(id)).findFirst().orElse(null);
            if (last != null && done.test(last)) return last;
            Thread.sleep(500);
        }
        throw new AssertionError("cluster status of " + id + " not as expected within " + WITHIN_SECONDS + " s: " + last);
    }

    private interface ConditionCall {
        VolumeCondition get() throws Exception;
    }

    private static VolumeCondition awaitCondition(ConditionCall call, boolean abnormal) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WITHIN_SECONDS);
        VolumeCondition last = null;
        while (System.nanoTime() < deadline) {
            last = call.get();
            if (last.getAbnormal() == abnormal) return last;
            Thread.sleep(500);
        }
        throw new AssertionError("condition not " + (abnormal ? "abnormal" : "normal") + " within " + WITHIN_SECONDS + " s: " + last);
    }
}
