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
import java.nio.file.Path;
import java.util.List;
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
        try (var mounted = fx.mounted(id, a)) {
            fx.controllerPublish(a, id);
            Path records = mounted.on(a).resolve("records");
            writeRecords(records, 0, 3000);
            String cBefore = fx.round(c, a, id).getPoint();
            fx.round(b, a, id);                             // B's cut last: the copy a failover may take (FailoverTarget)
            writeRecords(records, 3000, 3500);              // after the last round: the failover loses them

            fx.failoverByPublish(a, b, id);

            // C follows epoch 2 and gets a round from B by itself (a full copy: it held A's point, which B never had)
            long failedOver = System.nanoTime();
            var cFollowing = await(c, id, r -> r.getEpoch() == 2 && r.getRole().equals("SECONDARY")
                    && !r.getPoint().isEmpty() && !r.getPoint().equals(cBefore) && r.hasLastRound());
            System.out.printf("%s a secondary of epoch 2 holding %s's point %d ms after the failover: %d bytes (its first round from %s)%n",
                    c, b, (System.nanoTime() - failedOver) / 1_000_000, cFollowing.getLastRound().getBytes(), b);
            assertTrue(cFollowing.getLastRound().getBytes() > 0, cFollowing.toString());

            // B serves every record up to the last round, and takes more; C's next round is a delta against B's point
            Path onB = mounted.on(b);
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
            mounted.off(a);                                 // the old pod's mounts go (the CO's clean-up)
            long unstaged = System.nanoTime();
            var aFollowing = await(a, id, r -> r.getEpoch() == 2 && r.getRole().equals("SECONDARY") && !r.getPoint().isEmpty()
                    && r.hasLastRound());
            System.out.printf("%s a secondary of epoch 2 holding %s's point %d ms after its mounts went: %d bytes (by checksums against its own image)%n", a, b,
                    (System.nanoTime() - unstaged) / 1_000_000, aFollowing.getLastRound().getBytes());
            assertTrue(aFollowing.hasLastRound() && aFollowing.getLastRound().getBytes() > 0, "a round from " + b + ": " + aFollowing);

            // a handoff to C: every record B has, byte-identical
            mounted.gone(b);
            assertRecords(mounted.handedTo(c, 3).resolve("records"), 5000);
            mounted.gone(c);

            // A follows epoch 3 in turn; a handoff back to A gives it B's data, none of its own writes after the failover
            await(a, id, r -> r.getEpoch() == 3 && r.getRole().equals("SECONDARY"));
            assertRecords(mounted.handedTo(a, 4).resolve("records"), 5000);
            mounted.gone(a);
            // the other two follow epoch 4: every copy protects the volume again
            for (String other : List.of(b, c)) await(other, id, r -> r.getEpoch() == 4 && r.getRole().equals("SECONDARY"));
            fx.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
            for (String n : List.of(a, b, c)) assertFalse(fx.replica(n, id).getPresent(), n + " holds nothing after the delete");
        }
    }

    /** Polls the node's replica until {@code done} holds, within {@link #BOUND_S}. */
    static GetReplicaResponse await(String node, String id, Predicate<GetReplicaResponse> done) throws Exception {
        return fx.awaitReplica(node, id, BOUND_S, done);
    }
}
