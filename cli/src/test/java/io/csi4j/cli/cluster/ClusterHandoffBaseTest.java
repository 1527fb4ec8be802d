package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.DeleteVolumeRequest;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * After a planned handoff A -> B the old primary A resyncs from the common base (issue 28, docs/replication.md
 * "Handoff"): A kept the final point B pulled as its replica, B kept its replica of that point, so B's first round to A
 * is a delta against it, not a full copy. Real processes: a controller and two image-engine agents over mutual TLS.
 */
class ClusterHandoffBaseTest {
    static final long MIB = 1L << 20;
    static final long BULK = 64 * MIB;

    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, 8));

    @Test
    void theOldPrimarysFirstRoundAfterAHandoffIsADeltaAgainstThePointItHandedOver() throws Exception {
        var volume = fx.createReplicated("base", 128 * MIB);
        String id = volume.id(), a = volume.primary(), b = volume.secondary();
        try (var mounted = fx.mounted(id, a)) {
            fx.controllerPublish(a, id);
            Path onA = mounted.on(a);
            byte[] bulkSum = writeBulk(onA.resolve("bulk"));
            writeRecords(onA.resolve("records"), 0, 2000);
            var first = fx.round(b, a, id);
            System.out.printf("first round of %s: %d bytes (full)%n", b, first.getBytesReceived());
            assertTrue(first.getBytesReceived() >= BULK, "a full copy of the 64 MiB written: " + first.getBytesReceived());
            mounted.gone(a);

            fx.controllerPublish(b, id);                                   // the handoff: B pulls A's final point P
            assertEquals("PRIMARY", fx.replica(b, id).getRole());
            String handed = fx.replica(b, id).getPoint();
            var aAfter = fx.replica(a, id);
            assertEquals("SECONDARY", aAfter.getRole());
            assertEquals(handed, aAfter.getPoint(), "A holds the point it handed over");

            Path onB = mounted.on(b);
            assertRecords(onB.resolve("records"), 2000);
            assertArrayEquals(bulkSum, sum(onB.resolve("bulk")));
            writeRecords(onB.resolve("records"), 2000, 3000);
            mounted.off(b);

            var back = fx.round(a, b, id);                                  // B's first round to A
            System.out.printf("first round of %s from %s after the handoff: %d bytes since %s (%d MiB written before)%n", a, b,
                    back.getBytesReceived(), back.getBasePoint(), BULK / MIB);
            assertEquals(handed, back.getBasePoint(), "a delta against the point A handed over");
            assertTrue(back.getBytesReceived() > 0 && back.getBytesReceived() < BULK / 8, "a delta: " + back.getBytesReceived());
            assertEquals(back.getPoint(), fx.replica(a, id).getPoint());

            var next = fx.round(a, b, id);                                  // and then deltas against B's own points
            assertEquals(back.getPoint(), next.getBasePoint());
            assertTrue(next.getBytesReceived() < BULK / 8, "a delta: " + next.getBytesReceived());

            fx.controllerUnpublish(b, id);
            Path again = mounted.handedTo(a, 3);                           // a handoff back: A serves B's data
            assertRecords(again.resolve("records"), 3000);
            assertArrayEquals(bulkSum, sum(again.resolve("bulk")));
            mounted.gone(a);

            fx.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
            for (String n : List.of(a, b)) {
                assertFalse(fx.replica(n, id).getPresent(), n + " holds nothing after the delete");
                assertEquals(List.of(), mentioning(fx.tmp, n, id), "nothing of the volume left on " + n);
            }
        }
    }

    /** 64 MiB of seeded random bytes, fsynced; returns their SHA-256. */
    static byte[] writeBulk(Path file) throws Exception {
        var random = new Random(28);
        var digest = MessageDigest.getInstance("SHA-256");
        byte[] chunk = new byte[(int) MIB];
        try (var ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (long at = 0; at < BULK; at += MIB) {
                random.nextBytes(chunk);
                digest.update(chunk);
                ch.write(ByteBuffer.wrap(chunk), at);
            }
            ch.force(true);
        }
        return digest.digest();
    }

    static byte[] sum(Path file) throws Exception {
        var digest = MessageDigest.getInstance("SHA-256");
        byte[] chunk = new byte[(int) MIB];
        try (var in = Files.newInputStream(file)) {
            for (int n = in.read(chunk); n > 0; n = in.read(chunk)) digest.update(chunk, 0, n);
        }
        return digest.digest();
    }

    /** Every file under the node's pool (images, snapshots, replicas, .tmp) and replication dir naming the volume. */
    static List<Path> mentioning(Path tmp, String node, String id) throws Exception {
        List<Path> found = new ArrayList<>();
        for (Path dir : List.of(tmp.resolve(node).resolve("pool"), tmp.resolve(node).resolve("replication"))) {
            if (!Files.exists(dir)) continue;
            try (Stream<Path> all = Files.walk(dir)) {
                all.filter(p -> p.getFileName().toString().contains(id)).forEach(found::add);
            }
        }
        return found;
    }
}
