package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterHandoffBaseTest.BULK;
import static io.csi4j.cli.cluster.ClusterHandoffBaseTest.MIB;
import static io.csi4j.cli.cluster.ClusterHandoffBaseTest.mentioning;
import static io.csi4j.cli.cluster.ClusterHandoffBaseTest.sum;
import static io.csi4j.cli.cluster.ClusterHandoffBaseTest.writeBulk;
import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
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
    /** What may cross to A: far under the 64 MiB of data its image already holds. */
    static final long BOUND = BULK / 4;
    static final long BOUND_S = 90;

    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, 8));

    @Test
    void aFencedOldPrimarysFirstRoundSendsOnlyWhatDiffersFromItsImage() throws Exception {
        try (var v = FencedRecipe.fullRoundToB(fx, "fenced-resync", onA -> writeBulk(onA.resolve("bulk")))) {
            String id = v.id, a = v.a, b = v.b;
            assertTrue(v.full.getBytesReceived() >= BULK, "a full copy of the 64 MiB written: " + v.full.getBytesReceived());
            writeRecords(v.onA.resolve("records"), 2000, 2200);   // after the last round: lost with A
            fx.failoverByPublish(a, b, id);

            // A's pod still writes through its mount after the failover (no agent to fence it yet): no point has these
            writeRecords(v.onA.resolve("records"), 2200, 2400);
            writeFile(v.onA.resolve("after-failover"), 4 * MIB);

            // B serves every record up to the last round and takes other ones
            Path onB = v.stagedOnB();
            writeRecords(onB.resolve("records"), 2000, 2600);

            // A comes back with its data dir and its mounts: fenced; once the mounts go it follows B by itself
            long unstaged = v.restartedFencedThenUnstaged(BOUND_S);
            var following = fx.awaitReplica(a, id, BOUND_S, r -> r.getEpoch() == 2 && r.getRole().equals("SECONDARY")
                    && !r.getPoint().isEmpty() && r.hasLastRound());
            List<String[]> pulls = fx.pulls(a, id, b);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_S);
            while (pulls.isEmpty() && System.nanoTime() < deadline) {   // the log line follows the recorded point
                Thread.sleep(200);
                pulls = fx.pulls(a, id, b);
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
            v.mounted.off(b);
            Path back = v.handedBackToA();
            assertRecords(back.resolve("records"), 2600);
            assertArrayEquals(v.data, sum(back.resolve("bulk")), "the 64 MiB byte-identical");
            v.deleted();
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
}
