package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterHandoffBaseTest.BULK;
import static io.csi4j.cli.cluster.ClusterHandoffBaseTest.MIB;
import static io.csi4j.cli.cluster.ClusterHandoffBaseTest.sum;
import static io.csi4j.cli.cluster.ClusterHandoffBaseTest.writeBulk;
import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.replicated;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
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
    /** "replica of <id> now holds point <p> from node '<n>': <bytes> bytes ..." in an agent's log (Rounds.pull). */
    static final Pattern PULLED = Pattern.compile("replica of (\\S+) now holds point (\\S+) from node '([^']+)': (\\d+) bytes(.*)");

    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, FAILOVER_AFTER_S,
            List.of("node-a", "node-b", "node-c")));

    /** A volume of three replicas: its primary, then the secondary whose point is the newest, then the other. */
    record Volume(String id, String a, String b, String c, byte[] bulkSum) {}

    /**
     * Created, published and staged on its primary A: 64 MiB of random data and 2000 records, a full round to C, 300
     * more records and a full round to B (B's point is the newest). Returns the volume and the records path on A.
     */
    static Volume withTwoFullRounds(String name) throws Exception {
        // 96 MiB: each agent's pool is 1 GiB and a round promises the volume's size again for the image it builds
        String id = fx.csi().createVolume(replicated(name, 3, "24h").setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(96 * MIB))
                .build()).getVolume().getVolumeId();
        var tags = ReplicatedVolumeId.parse(id).orElseThrow().tags();
        String a = tags.get(0), b = tags.get(1), c = tags.get(2);
        fx.controllerPublish(a, id);
        Path onA = fx.stageAndPublish(a, id);
        byte[] bulkSum = writeBulk(onA.resolve("bulk"));
        writeRecords(onA.resolve("records"), 0, 2000);
        var toC = fx.round(c, a, id);
        writeRecords(onA.resolve("records"), 2000, 2300);
        var toB = fx.round(b, a, id);
        System.out.printf("%s: full rounds from %s: %d bytes to %s, %d bytes to %s%n", id, a, toC.getBytesReceived(), c,
                toB.getBytesReceived(), b);
        assertTrue(toC.getBytesReceived() >= BULK && toB.getBytesReceived() >= BULK, "full copies of the 64 MiB written");
        return new Volume(id, a, b, c, bulkSum);
    }

    /**
     * C (holding A's older point) follows B's epoch by itself and gets a round from B at once: by checksums against its
     * old point, far fewer bytes than the data. Returns the point it then holds.
     */
    static String followsByChecksums(Volume v, String held, long since) throws Exception {
        long epoch = fx.replica(v.b(), v.id()).getEpoch();
        // the agent logs a pull once its point and its round's figures are recorded: wait for that line, then read them
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        List<String[]> pulls = pulls(v.c(), v.id(), v.b());
        while (pulls.isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no round of " + v.c() + " from " + v.b() + " within 90 s: " + fx.replica(v.c(), v.id())
                        + "\ncontroller:\n" + fx.cluster.controller.stderr().lines().filter(l -> l.contains("replication")).toList()
                        + "\n" + v.c() + ":\n" + fx.cluster.agent(v.c()).child.stderr().lines()
                        .filter(l -> l.contains(v.id()) && !l.contains("call: ")).toList());
            }
            Thread.sleep(250);
            pulls = pulls(v.c(), v.id(), v.b());
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

    /** The pulls {@code node}'s agent logged of the volume from {@code from}: {point, bytes, the rest of the line}. */
    static List<String[]> pulls(String node, String id, String from) {
        return fx.cluster.agent(node).child.stderr().lines().map(PULLED::matcher).filter(m -> m.find()
                && m.group(1).equals(id) && m.group(3).equals(from)).map(m -> new String[] {m.group(2), m.group(4), m.group(5)}).toList();
    }

    /** A handoff to C (ControllerPublishVolume), staged there: every record and the 64 MiB byte-identical. */
    static void handedToC(Volume v, int records) throws Exception {
        long started = System.nanoTime();
        retrying(() -> fx.controllerPublish(v.c(), v.id()), "the publish on " + v.c());
        Path onC = fx.stageAndPublish(v.c(), v.id());
        try {
            System.out.printf("handoff to %s, published and staged: %d ms%n", v.c(), (System.nanoTime() - started) / 1_000_000);
            assertEquals("PRIMARY", fx.replica(v.c(), v.id()).getRole());
            assertRecords(onC.resolve("records"), records);
            assertArrayEquals(v.bulkSum(), sum(onC.resolve("bulk")), "the 64 MiB byte-identical");
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
            fx.cluster.agent(v.a()).child.signal("KILL");   // by its pid; its mounts stay in the kernel
            long killed = System.nanoTime();
            retrying(() -> fx.controllerUnpublish(v.a(), v.id()), "the force-detach from the lost primary " + v.a());
            long failedOver = System.nanoTime();
            System.out.printf("%s failed over to %s by the unpublish from %s, %d ms after the kill%n", v.id(), v.b(), v.a(),
                    (failedOver - killed) / 1_000_000);
            assertEquals("PRIMARY", fx.replica(v.b(), v.id()).getRole(), "the copy with the newest point is promoted");
            followsByChecksums(v, held, failedOver);
            // the pod lands on C once A answers again (a publish elsewhere than the primary waits for every node)
            restartA(v);
            handedToC(v, 2300);
        } finally {
            cleanUp(v);
        }
    }

    @Test
    void afterAPlannedHandoffTheThirdCopysFirstRoundSendsOnlyWhatDiffers() throws Exception {
        var v = withTwoFullRounds("resync-handoff");
        String held = fx.replica(v.c(), v.id()).getPoint();
        fx.unpublishAndUnstage(v.a(), v.id());
        fx.controllerUnpublish(v.a(), v.id());
        long handed = System.nanoTime();
        fx.controllerPublish(v.b(), v.id());                // the handoff A -> B: a delta against B's point
        assertEquals("PRIMARY", fx.replica(v.b(), v.id()).getRole());
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
        cleanUp(v);
    }

    /** A's agent started again if it was killed, and every node answering. */
    static void restartA(Volume v) throws Exception {
        var agent = fx.cluster.agent(v.a());
        if (agent.child == null || !agent.child.alive()) {
            agent.start();
            fx.cluster.awaitEveryNode();
        }
    }

    /** A back (a killed pod's mounts cleaned up as kubelet would), the volume unpublished everywhere and deleted. */
    static void cleanUp(Volume v) throws Exception {
        restartA(v);
        fx.unpublishAndUnstage(v.a(), v.id());             // idempotent: nothing when already done
        for (String n : List.of(v.a(), v.b(), v.c())) retrying(() -> fx.controllerUnpublish(n, v.id()), "unpublish from " + n);
        retrying(() -> fx.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v.id()).build()), "delete");
    }

    /** Calls {@code call} each second while it answers UNAVAILABLE or ABORTED (a delay, a round under way), 120 s at most. */
    static void retrying(Runnable call, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            try {
                call.run();
                return;
            } catch (StatusRuntimeException e) {
                var code = e.getStatus().getCode();
                if ((code != Status.Code.UNAVAILABLE && code != Status.Code.ABORTED) || System.nanoTime() > deadline) {
                    throw new AssertionError(what + ": " + e.getStatus() + "\ncontroller:\n" + fx.cluster.controller.stderr(), e);
                }
                Thread.sleep(1000);
            }
        }
    }
}
