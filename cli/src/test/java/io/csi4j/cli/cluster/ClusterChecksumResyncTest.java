package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterHandoffBaseTest.BULK;
import static io.csi4j.cli.cluster.ClusterHandoffBaseTest.sum;
import static io.csi4j.cli.cluster.ClusterHandoffBaseTest.writeBulk;
import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A copy that holds an old point the new primary never had gets only the chunks that differ, by checksums, not a full
 * copy (issue 28, docs/replication.md "Resync by checksums"), with real processes: a controller started with {@code
 * --failover-after 6s} and three image-engine agents over mutual TLS on loopback. A three-replica volume with 64 MiB of
 * random data and fsynced records, a full round to C, more records and a full round to B. Each point is cut by A for
 * one secondary, so once B is primary (a failover by the CO's force-detach from A's SIGKILLed agent, or a planned
 * handoff) it holds none of C's: before this change C's first round from B was a full copy of the volume's allocated
 * data. A handoff to C then serves every record and the 64 MiB byte-identical.
 */
class ClusterChecksumResyncTest {
    static final int FAILOVER_AFTER_S = 6;
    /** What may cross to C where the points differ by a few hundred records: far under the 64 MiB written. */
    static final long BOUND = BULK / 4;

    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, FAILOVER_AFTER_S,
            List.of("node-a", "node-b", "node-c")));

    /**
     * Created, published and staged on its primary A: 64 MiB of random data and 2000 records, a full round to C, 300
     * more records and a full round to B (B's point is the newest).
     */
    static ThreeCopies withTwoFullRounds(String name) throws Exception {
        var v = ThreeCopies.withFullRoundsToCThenB(fx, name, onA -> writeBulk(onA.resolve("bulk")), onA -> null);
        assertTrue(v.toC().getBytesReceived() >= BULK && v.toB().getBytesReceived() >= BULK, "full copies of the 64 MiB written");
        return v;
    }

    /**
     * C (holding A's older point) follows B's epoch by itself and gets a round from B at once: by checksums against its
     * old point, far fewer bytes than the data. Returns the point it then holds.
     */
    static String followsByChecksums(ThreeCopies v, String held, long since) throws Exception {
        long epoch = fx.replica(v.b(), v.id()).getEpoch();
        // the agent logs a pull once its point and its round's figures are recorded: wait for that line, then read them
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        List<String[]> pulls = fx.pulls(v.c(), v.id(), v.b());
        while (pulls.isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no round of " + v.c() + " from " + v.b() + " within 90 s: " + fx.replica(v.c(), v.id())
                        + "\ncontroller:\n" + fx.cluster.controller.stderr().lines().filter(l -> l.contains("replication")).toList()
                        + "\n" + v.c() + ":\n" + fx.cluster.agent(v.c()).child.stderr().lines()
                        .filter(l -> l.contains(v.id()) && !l.contains("call: ")).toList());
            }
            Thread.sleep(250);
            pulls = fx.pulls(v.c(), v.id(), v.b());
        }
        var following = fx.replica(v.c(), v.id());
        System.out.printf("%s followed %s %d ms after it became primary: its first round %d bytes %s (a full copy: >= %d)%n",
                v.c(), v.b(), (System.nanoTime() - since) / 1_000_000, following.getLastRound().getBytes(),
                pulls.stream().map(p -> p[1] + p[2]).toList(), BULK);
        assertEquals(1, pulls.size(), "one round from " + v.b() + ": " + pulls);
        assertEquals("SECONDARY", following.getRole());
        assertEquals(epoch, following.getEpoch());
        assertEquals(following.getPoint(), pulls.getFirst()[0]);
        assertEquals(following.getLastRound().getBytes(), Long.parseLong(pulls.getFirst()[1]), "the round's bytes as the metrics count them");
        assertTrue(pulls.getFirst()[2].contains("since " + held + " (by checksums)"), "by checksums against its old point: " + pulls.getFirst()[2]);
        assertTrue(following.getLastRound().getBytes() > 0 && following.getLastRound().getBytes() < BOUND,
                "far fewer bytes than the 64 MiB of data: " + following.getLastRound().getBytes());
        return following.getPoint();
    }

    /** A handoff to C (ControllerPublishVolume), staged there: every record and the 64 MiB byte-identical. */
    static void handedToC(ThreeCopies v, int records) throws Exception {
        long started = System.nanoTime();
        fx.retrying(() -> fx.controllerPublish(v.c(), v.id()), "the publish on " + v.c());
        Path onC = fx.stageAndPublish(v.c(), v.id());
        try {
            System.out.printf("handoff to %s, published and staged: %d ms%n", v.c(), (System.nanoTime() - started) / 1_000_000);
            assertEquals("PRIMARY", fx.replica(v.c(), v.id()).getRole());
            assertRecords(onC.resolve("records"), records);
            assertArrayEquals(v.first(), sum(onC.resolve("bulk")), "the 64 MiB byte-identical");
        } finally {
            fx.unpublishAndUnstage(v.c(), v.id());
        }
    }

    @Test
    void afterAFailoverTheOtherSecondarysFirstRoundSendsOnlyWhatDiffers() throws Exception {
        var v = withTwoFullRounds("resync-failover");
        String held = fx.replica(v.c(), v.id()).getPoint();
        writeRecords(fx.target(v.a(), v.id()).resolve("records"), 2300, 2500);  // after the last round: lost with A
        try {
            long failedOver = fx.failoverByForceDetach(v.a(), v.b(), v.id());
            followsByChecksums(v, held, failedOver);
            // the pod lands on C once A answers again (a publish elsewhere than the primary waits for every node)
            fx.restartIfDown(v.a());
            handedToC(v, 2300);
        } finally {
            v.cleanUp();
        }
    }

    @Test
    void afterAPlannedHandoffTheThirdCopysFirstRoundSendsOnlyWhatDiffers() throws Exception {
        var v = withTwoFullRounds("resync-handoff");
        String held = fx.replica(v.c(), v.id()).getPoint();
        long handed = v.handoffToB();                       // the handoff A -> B: a delta against B's point
        followsByChecksums(v, held, handed);                // C held A's point for C, which B never had
        Path onB = fx.stageAndPublish(v.b(), v.id());
        try {
            assertRecords(onB.resolve("records"), 2300);
            writeRecords(onB.resolve("records"), 2300, 2600);
        } finally {
            fx.unpublishAndUnstage(v.b(), v.id());
        }
        fx.controllerUnpublish(v.b(), v.id());
        handedToC(v, 2600);
        v.cleanUp();
    }
}
