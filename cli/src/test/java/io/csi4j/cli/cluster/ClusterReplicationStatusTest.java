package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.util.JsonFormat;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.cluster.GetClusterStatusResponse;
import io.csi4j.proto.cluster.ReplicatedVolumeStatus;
import io.csi4j.proto.cluster.SecondaryStatus;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.ControllerGetVolumeRequest;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
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
    Path tmp;

    @Test
    void statusShowsEachSecondaryAndAStoppedOneMakesTheVolumeAbnormalUntilItsNextRound() throws Exception {
        Privileged.requireRoot();
        var flags = List.of("--engine", "image", "--pool-size", "1G", "--copy-bandwidth", "64M");
        try (var cluster = ProcessCluster.start(tmp, NODES, flags, List.of())) {
            var csi = ControllerGrpc.newBlockingStub(cluster.controllerChannel());
            String id = csi.withDeadlineAfter(120, TimeUnit.SECONDS).createVolume(CreateVolumeRequest.newBuilder().setName("rep-status")
                    .addVolumeCapabilities(ext4()).setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(64 * MIB))
                    .putParameters("csi4j.io/replicas", "2").putParameters("csi4j.io/replication-interval", "5s").build())
                    .getVolume().getVolumeId();
            var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
            String primary = parsed.tags().get(0);
            String secondary = parsed.tags().get(1);
            ManagedChannel nodeChannel = Channels.connect(Endpoint.parse("unix://" + tmp.resolve(primary).resolve("csi.sock")));
            try {
                var node = NodeGrpc.newBlockingStub(nodeChannel);
                Path staging = Files.createDirectories(tmp.resolve("staging").resolve(id));
                Path target = tmp.resolve("target").resolve(id);
                Files.createDirectories(target.getParent());
                csi.withDeadlineAfter(120, TimeUnit.SECONDS).controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder()
                        .setVolumeId(id).setNodeId(primary).setVolumeCapability(ext4()).build());
                node.withDeadlineAfter(120, TimeUnit.SECONDS).nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id)
                        .setStagingTargetPath(staging.toString()).setVolumeCapability(ext4()).build());
                node.withDeadlineAfter(120, TimeUnit.SECONDS).nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id)
                        .setStagingTargetPath(staging.toString()).setTargetPath(target.toString()).setVolumeCapability(ext4()).build());
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

                node.withDeadlineAfter(60, TimeUnit.SECONDS).nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id)
                        .setTargetPath(target.toString()).build());
                node.withDeadlineAfter(60, TimeUnit.SECONDS).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                        .setStagingTargetPath(staging.toString()).build());
                csi.withDeadlineAfter(60, TimeUnit.SECONDS).controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder()
                        .setVolumeId(id).setNodeId(primary).build());
                csi.withDeadlineAfter(120, TimeUnit.SECONDS).deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
                var after = status(cluster);
                assertTrue(after.getVolumesList().stream().noneMatch(v -> v.getVolumeId().equals(id)), after.toString());
            } finally {
                nodeChannel.shutdownNow();
            }
        }
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
