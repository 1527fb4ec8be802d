package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.ext4;
import static io.csi4j.cli.cluster.ClusterReplicationTest.replicated;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.cluster.NodeAgentGrpc;
import io.csi4j.proto.cluster.PeerAgent;
import io.csi4j.proto.cluster.SyncReplicaRequest;
import io.csi4j.proto.cluster.SyncReplicaResponse;
import io.csi4j.proto.csi.ControllerGetVolumeRequest;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.NodeGetVolumeStatsRequest;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Failover of a replicated volume (issue 28, docs/replication.md "Failover") with real processes: two image-engine
 * agents over mutual TLS and a controller started with {@code --failover-after 8s}. The primary's agent is SIGKILLed;
 * publishing on the secondary's node is UNAVAILABLE until the primary has been silent for the delay, then promotes
 * the secondary's latest complete point; the old primary, back, is fenced.
 */
class ClusterFailoverTest {
    static final List<String> NODES = List.of("node-a", "node-b");
    static final int FAILOVER_AFTER_S = 8;

    @TempDir
    static Path tmp;
    static ProcessCluster cluster;
    static final List<ManagedChannel> CHANNELS = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        Privileged.requireRoot();
        cluster = ProcessCluster.start(tmp, NODES, List.of("--engine", "image", "--pool-size", "1G", "--copy-bandwidth", "64M"),
                List.of("--failover-after", FAILOVER_AFTER_S + "s"));
    }

    @AfterAll
    static void stop() throws Exception {
        CHANNELS.forEach(ManagedChannel::shutdownNow);
        if (cluster != null) cluster.close();
    }

    static ControllerGrpc.ControllerBlockingStub csi() {
        return ControllerGrpc.newBlockingStub(cluster.controllerChannel()).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    static NodeGrpc.NodeBlockingStub node(String nodeId) {
        var channel = Channels.connect(Endpoint.parse("unix://" + tmp.resolve(nodeId).resolve("csi.sock")));
        CHANNELS.add(channel);
        return NodeGrpc.newBlockingStub(channel).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    static Path staging(String node, String id) throws Exception {
        return Files.createDirectories(tmp.resolve("staging-" + node).resolve(id));
    }

    static Path target(String node, String id) throws Exception {
        return Files.createDirectories(tmp.resolve("target-" + node)).resolve(id);
    }

    static Path stageAndPublish(String node, String id) throws Exception {
        node(node).nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(staging(node, id).toString()).setVolumeCapability(ext4()).build());
        node(node).nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging(node, id).toString())
                .setTargetPath(target(node, id).toString()).setVolumeCapability(ext4()).build());
        return target(node, id);
    }

    /** Node-side only (unmounts, detaches): what cleans up whatever the controller's side says. */
    static void unpublishAndUnstage(String node, String id) throws Exception {
        node(node).nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target(node, id).toString()).build());
        node(node).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging(node, id).toString()).build());
    }

    static void controllerPublish(String node, String id) {
        csi().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(node)
                .setVolumeCapability(ext4()).build());
    }

    static SyncReplicaResponse round(String secondary, String primary, String id) {
        var channel = Channels.builder(new Endpoint.Tcp("127.0.0.1", cluster.agent(secondary).port), cluster.controllerTls, "127.0.0.1").build();
        CHANNELS.add(channel);
        var from = PeerAgent.newBuilder().setNodeId(primary).setAddress(cluster.agent(primary).address()).setAuthority("127.0.0.1").build();
        return NodeAgentGrpc.newBlockingStub(channel).withDeadlineAfter(120, TimeUnit.SECONDS)
                .syncReplica(SyncReplicaRequest.newBuilder().setVolumeId(id).setPrimary(from).build());
    }

    static String state(String node, String id) throws Exception {
        Path file = tmp.resolve(node).resolve("replication").resolve(id + ".json");
        return Files.exists(file) ? Files.readString(file) : "";
    }

    @Test
    void aSilentPrimaryIsFailedOverAfterTheDelayAndFencedWhenItReturns() throws Exception {
        // a day's interval: only the round this test starts is the last complete point
        String id = csi().createVolume(replicated("fo-loss", 2, "24h").build()).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0);
        String b = parsed.tags().get(1);
        var agentA = cluster.agent(a);
        boolean aMounted = false;
        boolean bMounted = false;
        try {
            controllerPublish(a, id);
            Path records = stageAndPublish(a, id).resolve("records");
            aMounted = true;
            writeRecords(records, 0, 3000);
            var point = round(b, a, id);
            writeRecords(records, 3000, 3500);             // after the last complete point: a node loss costs them

            agentA.child.signal("KILL");                    // by its pid; its mounts stay in the kernel
            long killed = System.nanoTime();
            var early = assertThrows(StatusRuntimeException.class, () -> controllerPublish(b, id));
            assertEquals(Status.Code.UNAVAILABLE, early.getStatus().getCode(), early.getStatus().toString());
            assertTrue(early.getStatus().getDescription().contains("failover after " + FAILOVER_AFTER_S + "s"), early.getStatus().toString());
            assertTrue(early.getStatus().getDescription().contains(a), early.getStatus().toString());

            // the CO retries: a generous bound, no tight timing
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            int unavailable = 1;
            while (true) {
                try {
                    controllerPublish(b, id);
                    break;
                } catch (StatusRuntimeException e) {
                    if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() > deadline) throw e;
                    unavailable++;
                    Thread.sleep(1000);
                }
            }
            long waited = (System.nanoTime() - killed) / 1_000_000;
            System.out.printf("failover of %s from %s to %s: published %d ms after the kill, %d UNAVAILABLE answers first%n",
                    id, a, b, waited, unavailable);
            assertTrue(waited >= (FAILOVER_AFTER_S - 1) * 1000L, "not failed over before the delay: " + waited + " ms");

            Path moved = stageAndPublish(b, id);
            bMounted = true;
            assertRecords(moved.resolve("records"), 3000);   // every record up to the round, byte-identical, none torn
            assertTrue(state(b, id).contains("\"PRIMARY\""), state(b, id));
            assertTrue(state(b, id).contains("\"epoch\": \"2\"") || state(b, id).contains("\"epoch\":\"2\""), state(b, id));

            var condition = csi().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build())
                    .getStatus().getVolumeCondition();
            assertTrue(condition.getAbnormal(), condition.toString());
            assertTrue(condition.getMessage().contains("failed over at") && condition.getMessage().contains(point.getPoint())
                    && condition.getMessage().contains("replacing node '" + a + "'"), condition.toString());
            var stats = node(b).nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(id)
                    .setVolumePath(moved.toString()).build());
            assertTrue(stats.getVolumeCondition().getAbnormal(), stats.toString());
            assertTrue(stats.getVolumeCondition().getMessage().contains("failed over at"), stats.toString());

            // the old primary comes back: the next routed call tells it epoch 2 exists, and it fences its copy
            agentA.start();
            cluster.awaitEveryNode();
            csi().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build());
            assertTrue(state(a, id).contains("\"FENCED\""), state(a, id));
            unpublishAndUnstage(a, id);                     // its kernel mounts, left by the kill
            aMounted = false;
            Path again = staging(a, id);
            var fenced = assertThrows(StatusRuntimeException.class, () -> node(a).nodeStageVolume(NodeStageVolumeRequest.newBuilder()
                    .setVolumeId(id).setStagingTargetPath(again.toString()).setVolumeCapability(ext4()).build()));
            assertEquals(Status.Code.FAILED_PRECONDITION, fenced.getStatus().getCode(), fenced.getStatus().toString());
            assertTrue(fenced.getStatus().getDescription().contains("FENCED"), fenced.getStatus().toString());
        } finally {
            if (agentA.child == null || !agentA.child.alive()) {
                agentA.start();
                cluster.awaitEveryNode();
            }
            if (aMounted) unpublishAndUnstage(a, id);
            if (bMounted) unpublishAndUnstage(b, id);
        }
    }
}
