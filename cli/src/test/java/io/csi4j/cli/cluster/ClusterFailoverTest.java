package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.ext4;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.ControllerGetVolumeRequest;
import io.csi4j.proto.csi.NodeGetVolumeStatsRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Failover of a replicated volume (issue 28, docs/replication.md "Failover") with real processes: two image-engine
 * agents over mutual TLS and a controller started with {@code --failover-after 8s}. The primary's agent is SIGKILLed;
 * publishing on the secondary's node is UNAVAILABLE until the primary has been silent for the delay, then promotes
 * the secondary's latest complete point; the old primary, back, is fenced.
 */
class ClusterFailoverTest {
    static final int FAILOVER_AFTER_S = 8;

    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, FAILOVER_AFTER_S));

    @Test
    void aSilentPrimaryIsFailedOverAfterTheDelayAndFencedWhenItReturns() throws Exception {
        // a day's interval: only the round this test starts is the last complete point
        var volume = fx.createReplicated("fo-loss");
        String id = volume.id(), a = volume.primary(), b = volume.secondary();
        var agentA = fx.cluster.agent(a);
        boolean aMounted = false;
        boolean bMounted = false;
        try {
            fx.controllerPublish(a, id);
            Path records = fx.stageAndPublish(a, id).resolve("records");
            aMounted = true;
            writeRecords(records, 0, 3000);
            var point = fx.round(b, a, id);
            writeRecords(records, 3000, 3500);             // after the last complete point: a node loss costs them

            agentA.child.signal("KILL");                    // by its pid; its mounts stay in the kernel
            long killed = System.nanoTime();
            var early = assertThrows(StatusRuntimeException.class, () -> fx.controllerPublish(b, id));
            assertEquals(Status.Code.UNAVAILABLE, early.getStatus().getCode(), early.getStatus().toString());
            assertTrue(early.getStatus().getDescription().contains("failover after " + FAILOVER_AFTER_S + "s"), early.getStatus().toString());
            assertTrue(early.getStatus().getDescription().contains(a), early.getStatus().toString());

            int unavailable = 1 + fx.publishRetryingWhileUnavailable(b, id);   // the CO retries: a generous bound, no tight timing
            long waited = (System.nanoTime() - killed) / 1_000_000;
            System.out.printf("failover of %s from %s to %s: published %d ms after the kill, %d UNAVAILABLE answers first%n",
                    id, a, b, waited, unavailable);
            assertTrue(waited >= (FAILOVER_AFTER_S - 1) * 1000L, "not failed over before the delay: " + waited + " ms");

            Path moved = fx.stageAndPublish(b, id);
            bMounted = true;
            assertRecords(moved.resolve("records"), 3000);   // every record up to the round, byte-identical, none torn
            assertTrue(fx.state(b, id).contains("\"PRIMARY\""), fx.state(b, id));
            assertTrue(fx.state(b, id).contains("\"epoch\": \"2\"") || fx.state(b, id).contains("\"epoch\":\"2\""), fx.state(b, id));

            var condition = fx.csi().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build())
                    .getStatus().getVolumeCondition();
            assertTrue(condition.getAbnormal(), condition.toString());
            assertTrue(condition.getMessage().contains("failed over at") && condition.getMessage().contains(point.getPoint())
                    && condition.getMessage().contains("replacing node '" + a + "'"), condition.toString());
            var stats = fx.node(b).nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(id)
                    .setVolumePath(moved.toString()).build());
            assertTrue(stats.getVolumeCondition().getAbnormal(), stats.toString());
            assertTrue(stats.getVolumeCondition().getMessage().contains("failed over at"), stats.toString());

            // the old primary comes back: the next routed call tells it epoch 2 exists, and it fences its copy
            agentA.start();
            fx.cluster.awaitEveryNode();
            fx.csi().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build());
            assertTrue(fx.state(a, id).contains("\"FENCED\""), fx.state(a, id));
            fx.unpublishAndUnstage(a, id);                     // its kernel mounts, left by the kill
            aMounted = false;
            Path again = fx.staging(a, id);
            var fenced = assertThrows(StatusRuntimeException.class, () -> fx.node(a).nodeStageVolume(NodeStageVolumeRequest.newBuilder()
                    .setVolumeId(id).setStagingTargetPath(again.toString()).setVolumeCapability(ext4()).build()));
            assertEquals(Status.Code.FAILED_PRECONDITION, fenced.getStatus().getCode(), fenced.getStatus().toString());
            // FENCED, or already a secondary of epoch 2 (unstaged, it follows the new primary within a tick): never writable
            assertTrue(fenced.getStatus().getDescription().contains("FENCED") || fenced.getStatus().getDescription().contains("SECONDARY"),
                    fenced.getStatus().toString());
        } finally {
            if (agentA.child == null || !agentA.child.alive()) {
                agentA.start();
                fx.cluster.awaitEveryNode();
            }
            if (aMounted) fx.unpublishAndUnstage(a, id);
            if (bMounted) fx.unpublishAndUnstage(b, id);
        }
    }
}
