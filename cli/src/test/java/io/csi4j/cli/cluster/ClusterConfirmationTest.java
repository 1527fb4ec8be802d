package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.ext4;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The two-replica failover hole, closed for new stages (docs/replication.md, "Confirmation"), with real processes (two
 * image-engine agents over mutual TLS, a controller with {@code --failover-after 8s}): A primary, A's agent stopped,
 * failover to B, B's agent stopped, A's agent back: nothing that answers knows epoch 2, and A, unconfirmed after its
 * silence, refuses a new writable stage (UNAVAILABLE) instead of forking B's acknowledged writes away. B back: A is
 * fenced, B confirmed, B stages with its data. And the ordinary case: a restarted primary with its secondary alive is
 * confirmed within a few seconds.
 */
class ClusterConfirmationTest {
    static final int FAILOVER_AFTER_S = 8;
    static final long BOUND_S = 60;

    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, FAILOVER_AFTER_S));

    static NodeStageVolumeRequest stage(String node, String id) throws Exception {
        return NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(fx.staging(node, id).toString())
                .setVolumeCapability(ext4()).build();
    }

    static boolean mounted(Path path) throws Exception {
        return Files.readString(Path.of("/proc/self/mountinfo")).contains(" " + path + " ");
    }

    /** A writable NodeStageVolume on {@code node}, retried while UNAVAILABLE as a CO would; returns the retries. */
    static int stageRetryingWhileUnavailable(String node, String id) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_S);
        int unavailable = 0;
        while (true) {
            try {
                fx.node(node).nodeStageVolume(stage(node, id));
                return unavailable;
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() > deadline) throw e;
                unavailable++;
                Thread.sleep(500);
            }
        }
    }

    @Test
    void aReturningOldPrimaryWhoseSuccessorIsSilentRefusesANewWritableStage() throws Exception {
        fx.cluster.awaitEveryNode();
        var volume = fx.createReplicated("hole");
        String id = volume.id(), a = volume.primary(), b = volume.secondary();
        var agentA = fx.cluster.agent(a);
        var agentB = fx.cluster.agent(b);
        boolean aStopped = false;
        boolean bStopped = false;
        boolean bMounted = false;
        try {
            fx.controllerPublish(a, id);
            Path onA = fx.stageAndPublish(a, id);
            writeRecords(onA.resolve("records"), 0, 500);
            fx.round(b, a, id);                                    // B holds records 0..499
            fx.unpublishAndUnstage(a, id);

            var failover = fx.stopAgentUntilFailover(a, b, id);   // failover after the delay
            aStopped = true;
            assertTrue(fx.state(b, id).contains("\"PRIMARY\"") && fx.state(b, id).contains("\"2\""), fx.state(b, id));
            Path onB = fx.stageAndPublish(b, id);                  // the failover confirmed it: at once
            bMounted = true;
            assertRecords(onB.resolve("records"), 500);
            writeRecords(onB.resolve("records"), 500, 800);      // acknowledged writes at epoch 2, only on B
            fx.unpublishAndUnstage(b, id);
            bMounted = false;
            fx.csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(b).build());

            agentB.child.signal("STOP");
            bStopped = true;
            agentA.child.signal("CONT");
            aStopped = false;
            long contA = System.nanoTime();
            assertTrue(fx.state(a, id).contains("\"PRIMARY\"") && fx.state(a, id).contains("\"1\""), "A knows only epoch 1: "
                    + fx.state(a, id));

            // THE HOLE: A says PRIMARY@1 and nothing answering knows epoch 2. What the controller does with a publish to A:
            String controllerPublish;
            try {
                fx.controllerPublish(a, id);
                controllerPublish = "OK";
            } catch (StatusRuntimeException e) {
                controllerPublish = e.getStatus().getCode().toString();
            }
            // A new writable stage on A is refused, again and again while B is silent (several scheduler ticks)
            int refused = 0;
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (refused < 3 || System.nanoTime() < until) {
                var e = org.junit.jupiter.api.Assertions.assertThrows(StatusRuntimeException.class, () -> fx.node(a).nodeStageVolume(stage(a, id)),
                        "a writable stage of the old primary on " + a + " while " + b + " (epoch 2) is silent");
                assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
                assertTrue(e.getStatus().getDescription().contains("cannot rule out a failover while this node was away"),
                        e.getStatus().getDescription());
                assertFalse(mounted(fx.staging(a, id)), "nothing staged on " + a);
                refused++;
                Thread.sleep(1000);
            }
            assertTrue(fx.state(a, id).contains("\"PRIMARY\"") && fx.state(a, id).contains("\"1\""), fx.state(a, id));
            System.out.printf("hole on %s: failed over to %s %d ms after SIGSTOP (%d UNAVAILABLE first); with %s stopped and %s back,"
                            + " ControllerPublishVolume to %s answered %s and %d writable stages there were refused UNAVAILABLE over %d ms%n",
                    id, b, failover.millis(), failover.unavailable(), b, a, a, controllerPublish, refused,
                    (System.nanoTime() - contA) / 1_000_000);
            assertEquals("OK", controllerPublish, "routing takes A's PRIMARY@1 for the primary (what the stage refusal is for)");

            agentB.child.signal("CONT");
            bStopped = false;
            long contB = System.nanoTime();
            long bound = contB + TimeUnit.SECONDS.toNanos(BOUND_S);
            while (!fx.state(a, id).contains("\"FENCED\"")) {
                if (System.nanoTime() > bound) throw new AssertionError("A never fenced: " + fx.state(a, id));
                Thread.sleep(100);
            }
            long fenced = System.nanoTime();
            var onA2 = org.junit.jupiter.api.Assertions.assertThrows(StatusRuntimeException.class, () -> fx.node(a).nodeStageVolume(stage(a, id)));
            assertEquals(Status.Code.FAILED_PRECONDITION, onA2.getStatus().getCode(), onA2.getStatus().toString());

            fx.csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(a).build());
            fx.publishRetryingWhileUnavailable(b, id);
            int stageRetries = stageRetryingWhileUnavailable(b, id);       // B was stopped past the delay: confirmed first
            long staged = System.nanoTime();
            bMounted = true;
            fx.node(b).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                    .setStagingTargetPath(fx.staging(b, id).toString()).build());
            bMounted = false;
            Path again = fx.stageAndPublish(b, id);
            bMounted = true;
            assertRecords(again.resolve("records"), 800);           // B's epoch-2 writes, all there
            System.out.printf("%s back: %s FENCED %d ms after SIGCONT; %s staged %d ms after it (%d UNAVAILABLE first)%n", b, a,
                    (fenced - contB) / 1_000_000, b, (staged - contB) / 1_000_000, stageRetries);
        } finally {
            if (aStopped) agentA.child.signal("CONT");
            if (bStopped) agentB.child.signal("CONT");
            if (bMounted) {
                try {
                    fx.unpublishAndUnstage(b, id);
                } catch (StatusRuntimeException ignored) {
                    // not published: unstage alone
                    fx.node(b).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                            .setStagingTargetPath(fx.staging(b, id).toString()).build());
                }
            }
        }
    }

    @Test
    void aRestartedPrimaryWithItsSecondaryAliveIsConfirmedWithinSeconds() throws Exception {
        fx.cluster.awaitEveryNode();
        var volume = fx.createReplicated("restart");
        String id = volume.id(), a = volume.primary();
        var agentA = fx.cluster.agent(a);
        boolean aStaged = false;
        try {
            fx.controllerPublish(a, id);
            fx.node(a).nodeStageVolume(stage(a, id));              // created by the controller: confirmed
            fx.node(a).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                    .setStagingTargetPath(fx.staging(a, id).toString()).build());

            agentA.child.signal("KILL");
            agentA.start();                                      // returns once it serves: every primary unconfirmed
            long serving = System.nanoTime();
            int retries = stageRetryingWhileUnavailable(a, id);
            aStaged = true;
            long ms = (System.nanoTime() - serving) / 1_000_000;
            System.out.printf("restart of %s's agent: its primary confirmed and staged %d ms after it served (%d UNAVAILABLE first)%n",
                    a, ms, retries);
            assertTrue(ms < TimeUnit.SECONDS.toMillis(30), "confirmed within seconds: " + ms + " ms");
        } finally {
            if (agentA.child == null || !agentA.child.alive()) {
                agentA.start();
                fx.cluster.awaitEveryNode();
            }
            if (aStaged) fx.node(a).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                    .setStagingTargetPath(fx.staging(a, id).toString()).build());
        }
    }
}
