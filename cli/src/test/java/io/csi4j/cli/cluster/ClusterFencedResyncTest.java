package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterChecksumResyncTest.PULLED;
import static io.csi4j.cli.cluster.ClusterHandoffBaseTest.BULK;
import static io.csi4j.cli.cluster.ClusterHandoffBaseTest.MIB;
import static io.csi4j.cli.cluster.ClusterHandoffBaseTest.mentioning;
import static io.csi4j.cli.cluster.ClusterHandoffBaseTest.sum;
import static io.csi4j.cli.cluster.ClusterHandoffBaseTest.writeBulk;
import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.cluster.GetReplicaResponse;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A fenced old primary that follows the new primary resyncs by checksums against its own image, not by a full copy
 * (issue 28, docs/replication.md "Resync by checksums"), with real processes: a controller started with {@code
 * --failover-after 8s} and two image-engine agents over mutual TLS on loopback. A's pod writes 64 MiB of random data
 * and fsynced records, a full round to B, more records; A's agent is SIGKILLed and the volume fails over to B; A's
 * mount (left in the kernel) then takes more writes that no point has; B takes other records. A, restarted, is
 * fenced; once its mounts go it follows B and its first round sends only the chunks that differ from its image. A
 * handoff back to A serves exactly B's data: none of A's writes after the failover.
 */
class ClusterFencedResyncTest {
    static final int FAILOVER_AFTER_S = 8;
    /** What may cross to A: far under the 64 MiB of data its image already holds. */
    static final long BOUND = BULK / 4;
    static final long BOUND_S = 90;

    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, FAILOVER_AFTER_S));

    @Test
    void aFencedOldPrimarysFirstRoundSendsOnlyWhatDiffersFromItsImage() throws Exception {
        // 96 MiB: each agent's pool is 1 GiB and a round promises the volume's size again for the image it builds
        var v = fx.createReplicated("fenced-resync", 96 * MIB);
        String id = v.id(), a = v.primary(), b = v.secondary();
        var agentA = fx.cluster.agent(a);
        boolean aMounted = false, bMounted = false;
        try {
            fx.controllerPublish(a, id);
            Path onA = fx.stageAndPublish(a, id);
            aMounted = true;
            byte[] bulkSum = writeBulk(onA.resolve("bulk"));
            writeRecords(onA.resolve("records"), 0, 2000);
            var full = fx.round(b, a, id);
            System.out.printf("%s: full round from %s to %s: %d bytes%n", id, a, b, full.getBytesReceived());
            assertTrue(full.getBytesReceived() >= BULK, "a full copy of the 64 MiB written: " + full.getBytesReceived());
            writeRecords(onA.resolve("records"), 2000, 2200);   // after the last round: lost with A

            agentA.child.signal("KILL");                         // by its pid; its mounts stay in the kernel
            long killed = System.nanoTime();
            int unavailable = fx.publishRetryingWhileUnavailable(b, id);
            System.out.printf("failover of %s from %s to %s: %d ms after the kill (%d UNAVAILABLE first)%n", id, a, b,
                    (System.nanoTime() - killed) / 1_000_000, unavailable);
            assertEquals("PRIMARY", fx.replica(b, id).getRole());
            assertEquals(2, fx.replica(b, id).getEpoch());

            // A's pod still writes through its mount after the failover (no agent to fence it yet): no point has these
            writeRecords(onA.resolve("records"), 2200, 2400);
            writeFile(onA.resolve("after-failover"), 4 * MIB);

            // B serves every record up to the last round and takes other ones
            Path onB = fx.stageAndPublish(b, id);
            bMounted = true;
            assertRecords(onB.resolve("records"), 2000);
            writeRecords(onB.resolve("records"), 2000, 2600);

            // A comes back with its data dir and its mounts: fenced; once the mounts go it follows B by itself
            agentA.start();
            fx.cluster.awaitEveryNode();
            await(a, id, r -> r.getRole().equals("FENCED"));
            fx.unpublishAndUnstage(a, id);                       // the old pod's mounts go (the CO's clean-up)
            aMounted = false;
            long unstaged = System.nanoTime();
            var following = await(a, id, r -> r.getEpoch() == 2 && r.getRole().equals("SECONDARY") && !r.getPoint().isEmpty()
                    && r.hasLastRound());
            List<String[]> pulls = pulls(a, id, b);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_S);
            while (pulls.isEmpty() && System.nanoTime() < deadline) {   // the log line follows the recorded point
                Thread.sleep(200);
                pulls = pulls(a, id, b);
            }
            System.out.printf("%s a secondary of epoch 2 holding %s's point %d ms after its mounts went: its first round %d bytes %s"
                    + " (the volume holds over %d bytes of data)%n", a, b, (System.nanoTime() - unstaged) / 1_000_000,
                    following.getLastRound().getBytes(), pulls.stream().map(p -> p[1] + p[2]).toList(), BULK);
            assertEquals(1, pulls.size(), "one round from " + b + ": " + pulls);
            assertEquals(following.getPoint(), pulls.getFirst()[0]);
            assertTrue(pulls.getFirst()[2].contains("(by checksums against its own image)"), "against its image: " + pulls.getFirst()[2]);
            assertTrue(following.getLastRound().getBytes() > 0 && following.getLastRound().getBytes() < BOUND,
                    "far fewer bytes than the 64 MiB of data: " + following.getLastRound().getBytes());
            assertEquals(List.of(), mentioning(fx.tmp, a, id).stream().filter(p -> p.toString().contains("/.tmp/")).toList(),
                    "nothing left in A's .tmp (the still copy of its image removed)");

            // a handoff back to A: exactly B's data, none of A's writes after the failover
            fx.unpublishAndUnstage(b, id);
            bMounted = false;
            fx.controllerUnpublish(b, id);
            fx.controllerPublish(a, id);
            assertEquals("PRIMARY", fx.replica(a, id).getRole());
            assertEquals(3, fx.replica(a, id).getEpoch());
            Path back = fx.stageAndPublish(a, id);
            aMounted = true;
            assertRecords(back.resolve("records"), 2600);
            assertArrayEquals(bulkSum, sum(back.resolve("bulk")), "the 64 MiB byte-identical");
            assertFalse(Files.exists(back.resolve("after-failover")), "A's write after the failover is discarded");
            fx.unpublishAndUnstage(a, id);
            aMounted = false;
            fx.controllerUnpublish(a, id);
            fx.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        } finally {
            if (agentA.child == null || !agentA.child.alive()) {
                agentA.start();
                fx.cluster.awaitEveryNode();
            }
            if (aMounted) fx.unpublishAndUnstage(a, id);
            if (bMounted) fx.unpublishAndUnstage(b, id);
        }
    }

    /** {@code bytes} of random data, fsynced. */
    static void writeFile(Path file, long bytes) throws Exception {
        byte[] chunk = new byte[(int) MIB];
        new Random(2828).nextBytes(chunk);
        try (var ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (long at = 0; at < bytes; at += MIB) ch.write(ByteBuffer.wrap(chunk), at);
            ch.force(true);
        }
    }

    /** The pulls {@code node}'s agent logged of the volume from {@code from}: {point, bytes, the rest of the line}. */
    static List<String[]> pulls(String node, String id, String from) {
        return fx.cluster.agent(node).child.stderr().lines().map(PULLED::matcher).filter(m -> m.find()
                && m.group(1).equals(id) && m.group(3).equals(from)).map(m -> new String[] {m.group(2), m.group(4), m.group(5)}).toList();
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
