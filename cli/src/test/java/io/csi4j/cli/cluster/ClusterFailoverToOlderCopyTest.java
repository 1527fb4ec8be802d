package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.replicated;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.GetReplicaResponse;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A ControllerPublishVolume that fails over to its own node refuses when that node's copy is older than another
 * answering copy's (issue 28, docs/replication.md "Which copy a failover picks"), with real processes: a controller with
 * {@code --failover-after 6s}, three image-engine agents over mutual TLS. A three-replica volume: records 0..1999 and a
 * round to C, records ..2299 and a round to B; A's agent SIGKILLed. The publish on C waits out the delay (UNAVAILABLE),
 * then is FAILED_PRECONDITION naming B, and nothing changed on any copy (before, C was promoted and the 300 records B
 * held were lost with B's first round from C). The publish on B then fails over to B, which serves all 2300.
 * <p>
 * On the same cluster, a handoff past the node the volume was failed over from (docs/replication.md, "A handoff past a
 * node failed over from"): after the failover A -> B, the pod moves on to C while A is still silent.
 */
class ClusterFailoverToOlderCopyTest {
    static final int FAILOVER_AFTER_S = 6;

    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, FAILOVER_AFTER_S,
            List.of("node-a", "node-b", "node-c")));

    @Test
    void aPublishOnACopyOlderThanAnotherAnsweringOneIsRefusedNamingIt() throws Exception {
        var v = ThreeCopies.withFullRoundsToCThenB(fx, "fo-older", onA -> null, onA -> null);
        try {
            var heldByC = fx.replica(v.c(), v.id());
            var heldByB = fx.replica(v.b(), v.id());
            fx.cluster.agent(v.a()).child.signal("KILL");                    // by its pid; its mounts stay in the kernel
            long killed = System.nanoTime();
            var refused = assertThrows(StatusRuntimeException.class, () -> fx.publishRetryingWhileUnavailable(v.c(), v.id()));
            long waited = (System.nanoTime() - killed) / 1_000_000;
            System.out.printf("publish of %s on %s (older point) refused %d ms after the kill: %s%n", v.id(), v.c(), waited, refused.getStatus());
            assertEquals(Status.Code.FAILED_PRECONDITION, refused.getStatus().getCode(), refused.getStatus().toString());
            assertTrue(refused.getStatus().getDescription().contains("'" + v.b() + "'"), "names the fresher copy: " + refused.getStatus());
            assertTrue(waited >= (FAILOVER_AFTER_S - 1) * 1000L, "refused once the failover was due, not before: " + waited + " ms");
            // refused before any reservation: neither copy learnt an epoch, neither was promoted
            assertEquals(heldByC, fx.replica(v.c(), v.id()));
            assertEquals(heldByB, fx.replica(v.b(), v.id()));

            fx.publishRetryingWhileUnavailable(v.b(), v.id());
            assertEquals("PRIMARY", fx.replica(v.b(), v.id()).getRole());
            assertEquals(2, fx.replica(v.b(), v.id()).getEpoch());
            Path onB = fx.stageAndPublish(v.b(), v.id());
            try {
                assertRecords(onB.resolve("records"), ThreeCopies.RECORDS);  // every record of B's point
            } finally {
                fx.unpublishAndUnstage(v.b(), v.id());
            }
        } finally {
            v.cleanUp();
        }
    }

    /**
     * Records fsynced on A and a round to B and C; A's agent SIGKILLed; the failover to B by a publish on B; more records
     * on B; B's pod gone; ControllerPublishVolume on C while A is still silent: a handoff B -> C at epoch 3 (on main
     * UNAVAILABLE until A answers again or is forgotten), every record on C's mount; C's pod gone, a publish on B while A
     * is still silent: a handoff C -> B at epoch 4 past A by the list carried from B's failover note to C (without it
     * UNAVAILABLE), every record on B's mount. A's agent back: fenced, then (its leftover mounts gone) a secondary of
     * epoch 4 holding B's point, never PRIMARY at epoch 3 or above; a publish on A is a handoff from B with every record.
     */
    @Test
    void afterAFailoverThePodMovesToTheThirdCopyWhileTheNodeFailedOverFromIsSilent() throws Exception {
        String id = fx.csi().createVolume(replicated("fo-past-silent", 3, "24h").build()).getVolume().getVolumeId();
        var tags = ReplicatedVolumeId.parse(id).orElseThrow().tags();
        String a = tags.get(0), b = tags.get(1), c = tags.get(2);
        try {
            fx.controllerPublish(a, id);
            writeRecords(fx.stageAndPublish(a, id).resolve("records"), 0, 1000);
            fx.round(c, a, id);
            fx.round(b, a, id);                                         // B's point cut last: the failover may pick B
            fx.failoverByPublish(a, b, id);                            // A's agent SIGKILLed; its mounts stay in the kernel
            Path onB = fx.stageAndPublish(b, id);
            writeRecords(onB.resolve("records"), 1000, 1500);
            fx.unpublishAndUnstage(b, id);
            fx.controllerUnpublish(b, id);

            long started = System.nanoTime();
            int retries = publishWithin(c, id, 20);                   // main: UNAVAILABLE while A is silent
            System.out.printf("handoff of %s from %s to %s while %s is silent: %d ms (%d UNAVAILABLE/ABORTED first)%n", id, b, c, a,
                    (System.nanoTime() - started) / 1_000_000, retries);
            var onCState = fx.replica(c, id);
            assertEquals("PRIMARY", onCState.getRole(), onCState.toString());
            assertEquals(3, onCState.getEpoch());
            assertEquals("", onCState.getFailover(), "promoted by a handoff, not a failover");
            assertEquals("SECONDARY", fx.replica(b, id).getRole());
            assertEquals(3, fx.replica(b, id).getEpoch());
            assertEquals(a, onCState.getReplacedCarried(), "the handoff carried B's note: A replaced, holding nothing at 3 or above");
            Path onC = fx.stageAndPublish(c, id);
            try {
                assertRecords(onC.resolve("records"), 1500);            // byte-identical: A's 1000 and B's 500
            } finally {
                fx.unpublishAndUnstage(c, id);
            }

            // a second handoff while A is still silent: C holds no failover note, only the list carried from B's
            fx.controllerUnpublish(c, id);
            started = System.nanoTime();
            retries = publishWithin(b, id, 20);                       // before the carried list: UNAVAILABLE while A is silent
            System.out.printf("second handoff of %s from %s back to %s while %s is silent: %d ms (%d UNAVAILABLE/ABORTED first)%n", id,
                    c, b, a, (System.nanoTime() - started) / 1_000_000, retries);
            var onBState = fx.replica(b, id);
            assertEquals("PRIMARY", onBState.getRole(), onBState.toString());
            assertEquals(4, onBState.getEpoch());
            assertEquals("", onBState.getFailover(), "promoted by a handoff, not a failover");
            assertEquals(a, onBState.getReplacedCarried(), "carried on: the next handoff may pass A too");
            assertEquals("SECONDARY", fx.replica(c, id).getRole());
            assertEquals(4, fx.replica(c, id).getEpoch());
            Path onBAgain = fx.stageAndPublish(b, id);
            try {
                assertRecords(onBAgain.resolve("records"), 1500);       // byte-identical after two handoffs
            } finally {
                fx.unpublishAndUnstage(b, id);
            }

            fx.restartIfDown(a);                                        // same data dir: PRIMARY at epoch 1 on disk
            long back = System.nanoTime();
            List<String> seen = new ArrayList<>();
            boolean cleaned = false;
            GetReplicaResponse now;
            while (true) {
                now = fx.replica(a, id);
                String step = now.getRole() + "@" + now.getEpoch();
                if (seen.isEmpty() || !seen.getLast().equals(step)) seen.add(step);
                assertFalse(now.getRole().equals("PRIMARY") && now.getEpoch() >= 3, "A never primary at epoch 3 or above: " + seen);
                if (now.getRole().equals("FENCED") && !cleaned) {
                    fx.unpublishAndUnstage(a, id);                      // the kubelet's clean-up of the killed pod's mounts
                    cleaned = true;
                }
                if (now.getRole().equals("SECONDARY") && now.getEpoch() == 4 && !now.getPoint().isEmpty()) break;
                if (System.nanoTime() - back > TimeUnit.SECONDS.toNanos(60)) throw new AssertionError("A within 60 s: " + seen + " " + now);
                Thread.sleep(100);
            }
            System.out.printf("%s back: %s, following %s with a point %d ms after its agent served%n", a, seen, b,
                    (System.nanoTime() - back) / 1_000_000);
            assertEquals(now.getPoint(), fx.replica(a, id).getPoint());

            fx.controllerUnpublish(b, id);
            publishWithin(a, id, 20);                                   // every node answers: the ordinary handoff
            assertEquals("PRIMARY", fx.replica(a, id).getRole());
            assertEquals(5, fx.replica(a, id).getEpoch());
            assertEquals("", fx.replica(a, id).getFailover(), "a handoff from B, not a failover");
            assertEquals("", fx.replica(a, id).getReplacedCarried(), "every node answered: nothing carried");
            assertEquals("SECONDARY", fx.replica(b, id).getRole());
            assertEquals(5, fx.replica(b, id).getEpoch());
            Path onA = fx.stageAndPublish(a, id);
            try {
                assertRecords(onA.resolve("records"), 1500);
            } finally {
                fx.unpublishAndUnstage(a, id);
            }
        } finally {
            fx.restartIfDown(a);
            fx.unpublishAndUnstage(a, id);
            for (String n : List.of(a, b, c)) fx.retrying(() -> fx.controllerUnpublish(n, id), "unpublish from " + n);
            fx.retrying(() -> fx.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build()), "delete");
        }
    }

    /** ControllerPublishVolume retried each second while UNAVAILABLE or ABORTED, {@code seconds} at most; the retries. */
    private static int publishWithin(String node, String id, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        for (int retries = 0; ; retries++) {
            try {
                fx.controllerPublish(node, id);
                return retries;
            } catch (StatusRuntimeException e) {
                var code = e.getStatus().getCode();
                if ((code != Status.Code.UNAVAILABLE && code != Status.Code.ABORTED) || System.nanoTime() > deadline) throw e;
                Thread.sleep(1000);
            }
        }
    }
}
