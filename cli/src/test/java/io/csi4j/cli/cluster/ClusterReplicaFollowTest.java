package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.replicated;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.GetReplicaResponse;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * After a failover of a three-replica volume every remaining copy follows the new primary by itself (issue 28,
 * docs/replication.md "Failover (as built)"), with real processes: a controller started with {@code --failover-after 8s}
 * and three image-engine agents over mutual TLS on loopback. The primary's agent is SIGKILLed while its pod's fsynced,
 * checksummed records are on disk; after the failover to B the other secondary C moves to epoch 2 and gets rounds from
 * B with no call from the test (a full copy, then deltas); A, restarted with its data dir, is fenced, stays fenced while
 * its old mounts are there, and once they are gone becomes a secondary of epoch 2 holding B's data. Handoffs to C and
 * back to A then serve exactly B's records.
 */
class ClusterReplicaFollowTest {
    static final int FAILOVER_AFTER_S = 8;
    static final long VOLUME = 64L << 20;
    /** Bound of every wait for something the scheduler does by itself: a tick is a second, the machine is shared. */
    static final long BOUND_S = 60;

    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, FAILOVER_AFTER_S, List.of("node-a", "node-b", "node-c")));

    @Test
    void afterAFailoverTheOtherSecondaryAndTheReturningOldPrimaryFollowTheNewPrimary() throws Exception {
        // a day's interval: every round the test does not start is one the scheduler started to follow the new epoch
        String id = fx.csi().createVolume(replicated("follow", 3, "24h").build()).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0);
        String b = parsed.tags().get(1);
        String c = parsed.tags().get(2);
        var agentA = fx.cluster.agent(a);
        String mounted = null;
        boolean aMounted = false;
        try {
            fx.controllerPublish(a, id);
            Path records = fx.stageAndPublish(a, id).resolve("records");
            aMounted = true;
            writeRecords(records, 0, 3000);
            fx.round(b, a, id);
            String cBefore = fx.round(c, a, id).getPoint();
            writeRecords(records, 3000, 3500);              // after the last round: the failover loses them

            agentA.child.signal("KILL");                    // by its pid; its mounts stay in the kernel
            long killed = System.nanoTime();
            int unavailable = fx.publishRetryingWhileUnavailable(b, id);
            System.out.printf("failover of %s from %s to %s: %d ms after the kill (%d UNAVAILABLE first)%n", id, a, b,
                    (System.nanoTime() - killed) / 1_000_000, unavailable);
            assertEquals(2, fx.replica(b, id).getEpoch());
            assertEquals("PRIMARY", fx.replica(b, id).getRole());

            // C follows epoch 2 and gets a round from B by itself (a full copy: it held A's point, which B never had)
            long failedOver = System.nanoTime();
            var cFollowing = await(c, id, r -> r.getEpoch() == 2 && r.getRole().equals("SECONDARY")
                    && !r.getPoint().isEmpty() && !r.getPoint().equals(cBefore) && r.hasLastRound());
            System.out.printf("%s a secondary of epoch 2 holding %s's point %d ms after the failover: %d bytes (its first round from %s)%n",
                    c, b, (System.nanoTime() - failedOver) / 1_000_000, cFollowing.getLastRound().getBytes(), b);
            assertTrue(cFollowing.getLastRound().getBytes() > 0, cFollowing.toString());

            // B serves every record up to the last round, and takes more; C's next round is a delta against B's point
            Path onB = fx.stageAndPublish(b, id);
            mounted = b;
            assertRecords(onB.resolve("records"), 3000);
            writeRecords(onB.resolve("records"), 3000, 5000);
            var delta = fx.round(c, b, id);
            System.out.printf("round of %s from %s after 2000 records (256000 bytes) written on %s: %d bytes since %s%n", c, b, b,
                    delta.getBytesReceived(), delta.getBasePoint());
            assertEquals(cFollowing.getPoint(), delta.getBasePoint(), "a delta against the point C got from B");
            assertTrue(delta.getBytesReceived() > 0 && delta.getBytesReceived() < VOLUME / 4, "a delta: " + delta.getBytesReceived());

            // A comes back with its data dir and its mounts (left by the kill): fenced, and it stays so while they are there
            agentA.start();
            fx.cluster.awaitEveryNode();
            long back = System.nanoTime();
            await(a, id, r -> r.getRole().equals("FENCED"));
            System.out.printf("%s FENCED %d ms after its agent served%n", a, (System.nanoTime() - back) / 1_000_000);
            Thread.sleep(4000);                             // several ticks: a fenced copy under a mount is never pulled over
            assertEquals("FENCED", fx.replica(a, id).getRole(), "still staged: not made a secondary");
            // its listing says it is in use, so the scheduler does not ask it to follow each tick (a refused call a second)
            var refusedFollows = agentA.child.stderr().lines().filter(l -> l.contains("FollowReplica FAILED_PRECONDITION")).toList();
            System.out.printf("%s asked to follow while staged: %d times %s%n", a, refusedFollows.size(), refusedFollows);
            assertEquals(List.of(), refusedFollows, "no FollowReplica while its listing says its copy is in use");
            fx.unpublishAndUnstage(a, id);                   // the old pod's mounts go (the CO's clean-up)
            aMounted = false;
            long unstaged = System.nanoTime();
            var aFollowing = await(a, id, r -> r.getEpoch() == 2 && r.getRole().equals("SECONDARY") && !r.getPoint().isEmpty()
                    && r.hasLastRound());
            System.out.printf("%s a secondary of epoch 2 holding %s's point %d ms after its mounts went: %d bytes (by checksums against its own image)%n", a, b,
                    (System.nanoTime() - unstaged) / 1_000_000, aFollowing.getLastRound().getBytes());
            assertTrue(aFollowing.hasLastRound() && aFollowing.getLastRound().getBytes() > 0, "a round from " + b + ": " + aFollowing);

            // a handoff to C: every record B has, byte-identical
            fx.unpublishAndUnstage(b, id);
            mounted = null;
            fx.controllerUnpublish(b, id);
            fx.controllerPublish(c, id);
            assertEquals("PRIMARY", fx.replica(c, id).getRole());
            assertEquals(3, fx.replica(c, id).getEpoch());
            Path onC = fx.stageAndPublish(c, id);
            mounted = c;
            assertRecords(onC.resolve("records"), 5000);
            fx.unpublishAndUnstage(c, id);
            mounted = null;
            fx.controllerUnpublish(c, id);

            // A follows epoch 3 in turn; a handoff back to A gives it B's data, none of its own writes after the failover
            await(a, id, r -> r.getEpoch() == 3 && r.getRole().equals("SECONDARY"));
            fx.controllerPublish(a, id);
            assertEquals("PRIMARY", fx.replica(a, id).getRole());
            assertEquals(4, fx.replica(a, id).getEpoch());
            Path onA = fx.stageAndPublish(a, id);
            mounted = a;
            assertRecords(onA.resolve("records"), 5000);
            fx.unpublishAndUnstage(a, id);
            mounted = null;
            fx.controllerUnpublish(a, id);
            // the other two follow epoch 4: every copy protects the volume again
            for (String other : List.of(b, c)) await(other, id, r -> r.getEpoch() == 4 && r.getRole().equals("SECONDARY"));
            fx.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
            for (String n : List.of(a, b, c)) assertFalse(fx.replica(n, id).getPresent(), n + " holds nothing after the delete");
        } catch (Throwable failure) {
            // the clean-up below may fail too (e.g. a mount left): the original failure is the one reported
            cleanUp(agentA, id, a, aMounted, mounted, failure);
            throw failure;
        }
        cleanUp(agentA, id, a, aMounted, mounted, null);
    }

    /**
     * Restarts A if it is down and takes down what the test left mounted; with {@code failure} (the test's own), each
     * clean-up error is added to it as suppressed instead of replacing it.
     */
    static void cleanUp(ProcessCluster.AgentProcess agentA, String id, String a, boolean aMounted, String mounted, Throwable failure)
            throws Exception {
        List<ThrowingStep> steps = List.of(
                () -> {
                    if (agentA.child == null || !agentA.child.alive()) {
                        agentA.start();
                        fx.cluster.awaitEveryNode();
                    }
                },
                () -> {
                    if (aMounted) fx.unpublishAndUnstage(a, id);
                },
                () -> {
                    if (mounted != null) fx.unpublishAndUnstage(mounted, id);
                });
        for (ThrowingStep step : steps) {
            try {
                step.run();
            } catch (Exception | AssertionError e) {
                if (failure == null) throw e;
                failure.addSuppressed(e);
            }
        }
    }

    interface ThrowingStep {
        void run() throws Exception;
    }

    /** Polls the node's replica until {@code done} holds, within {@link #BOUND_S}. */
    static GetReplicaResponse await(String node, String id, Predicate<GetReplicaResponse> done) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_S);
        while (true) {
            GetReplicaResponse now;
            try {
                now = fx.replica(node, id);
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() > deadline) throw e;
                Thread.sleep(200);
                continue;
            }
            if (done.test(now)) return now;
            if (System.nanoTime() > deadline) throw new AssertionError("within " + BOUND_S + " s, node " + node + " still answers " + now);
            Thread.sleep(200);
        }
    }
}
