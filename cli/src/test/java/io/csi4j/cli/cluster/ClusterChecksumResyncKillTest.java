package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.ListCopiesRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A secondary SIGKILLed in the middle of a resync by checksums (docs/replication.md, "Resync by checksums") keeps the
 * previous or the new complete point, and the next round finishes the job with what differs, with real processes: a
 * controller and three image-engine agents over mutual TLS on loopback, each with {@code --copy-bandwidth 4M} so a
 * 16 MiB difference takes seconds. A three-replica volume, a full round to C, 16 MiB of new random data and a full round
 * to B, a planned handoff A -> B: C follows B and resyncs by checksums, and is killed once a quarter has arrived.
 */
class ClusterChecksumResyncKillTest {
    static final long MIB = 1L << 20;

    static ReplicaFixture f;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> f = new ReplicaFixture(dir, List.of("--copy-bandwidth", "4M"), List.of()));

    /** {@code mib} MiB of bytes seeded by {@code seed} into a new file, fsynced; returns their SHA-256. */
    static byte[] write(Path file, int mib, long seed) throws Exception {
        var random = new Random(seed);
        var digest = MessageDigest.getInstance("SHA-256");
        byte[] chunk = new byte[(int) MIB];
        try (var ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (int i = 0; i < mib; i++) {
                random.nextBytes(chunk);
                digest.update(chunk);
                ch.write(ByteBuffer.wrap(chunk), i * MIB);
            }
            ch.force(true);
        }
        return digest.digest();
    }

    @Test
    void aSecondaryKilledMidResyncKeepsACompletePointAndTheNextRoundFinishesIt() throws Exception {
        String id = f.csi().createVolume(ReplicaFixture.replicated("resync-kill", 3, 96 * MIB)).getVolume().getVolumeId();
        var tags = ReplicatedVolumeId.parse(id).orElseThrow().tags();
        String a = tags.get(0), b = tags.get(1), c = tags.get(2);
        f.controllerPublish(a, id);
        Path onA = f.publish(a, id, f.stage(a, id));
        byte[] first = write(onA.resolve("first"), 8, 1);
        writeRecords(onA.resolve("records"), 0, 2000);
        var toC = f.round(c, a, id);
        String held = toC.getPoint();
        byte[] second = write(onA.resolve("second"), 16, 2);   // what C's point lacks: the resync's 16 MiB
        writeRecords(onA.resolve("records"), 2000, 2300);
        var toB = f.round(b, a, id);
        System.out.printf("full rounds from %s: %d bytes to %s, %d bytes to %s%n", a, toC.getBytesReceived(), c, toB.getBytesReceived(), b);
        f.unpublishAndUnstage(a, id);
        f.controllerPublish(b, id);                         // the handoff A -> B; C follows B by itself and resyncs
        assertEquals("PRIMARY", f.agent(b).getReplica(io.csi4j.proto.cluster.GetReplicaRequest.newBuilder().setVolumeId(id).build()).getRole());

        awaitMidResync(c, id);
        f.cluster.agent(c).child.signal("KILL");
        long killed = System.nanoTime();
        String after = f.point(c, id);
        System.out.printf("%s killed mid-resync: its state names %s (it held %s)%n", c, after, held);
        assertTrue(after.equals(held) || after.endsWith("-" + b), "the previous point or one " + b + " cut: " + after);
        // the copy is byte for byte the point its state names, compared with the cutting node's snapshot of it while kept
        Path point = f.dataDir(after.equals(held) ? a : b).resolve("pool").resolve("snapshots").resolve(after + ".img");
        if (Files.exists(point)) {
            assertEquals(sha256(point), sha256(f.dataDir(c).resolve("pool").resolve("volumes").resolve(id + ".img")),
                    "the copy on " + c + " is point " + after + " byte for byte");
        }
        System.out.printf("compared with the point as cut: %s%n", Files.exists(point));
        f.cluster.agent(c).start();
        f.cluster.awaitEveryNode();
        assertEquals(List.of(), f.tmpFiles(c), "nothing left in " + c + "'s .tmp after its start");
        assertEquals(after, f.point(c, id), "the start keeps the point the state names");

        var next = f.round(c, b, id);
        System.out.printf("the round after the kill (%d ms later): %d bytes since %s%n", (System.nanoTime() - killed) / 1_000_000,
                next.getBytesReceived(), next.getBasePoint());
        assertEquals(after, next.getBasePoint(), "against the point it holds: by checksums, or a delta");
        assertTrue(next.getBytesReceived() < toC.getBytesReceived() + 16 * MIB, "not a full copy: " + next.getBytesReceived());
        if (after.equals(held)) {
            assertTrue(f.cluster.agent(c).child.stderr().lines().anyMatch(l -> l.contains("now holds point " + next.getPoint())
                    && l.contains("since " + held + " (by checksums)")), "the round after the kill is a resync by checksums again");
        }
        assertEquals(List.of(), f.tmpFiles(c));

        // C serves B's data: every record and both files byte-identical
        f.csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(b).build());
        f.controllerPublish(c, id);
        Path onC = f.publish(c, id, f.stage(c, id));
        try {
            assertRecords(onC.resolve("records"), 2300);
            assertArrayEquals(first, sum(onC.resolve("first")));
            assertArrayEquals(second, sum(onC.resolve("second")));
        } finally {
            f.unpublishAndUnstage(c, id);
        }
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        assertEquals(List.of(), ReplicaFixture.loops(id));
    }

    /** Waits (bounded) until C receives a round of the volume with 4 to 12 MiB of it arrived. */
    static void awaitMidResync(String node, String id) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String seen = "nothing";
        while (System.nanoTime() < deadline) {
            try {
                for (var copy : f.agent(node).withDeadlineAfter(5, TimeUnit.SECONDS).listCopies(ListCopiesRequest.getDefaultInstance()).getCopiesList()) {
                    seen = copy.getName() + " " + copy.getBytesDone() + "/" + copy.getBytesTotal();
                    if (copy.getIncoming() && copy.getName().contains(id) && copy.getBytesDone() >= 4 * MIB && copy.getBytesDone() <= 12 * MIB) {
                        System.out.printf("in the middle of the resync of %s on %s: %s%n", id, node, seen);
                        return;
                    }
                }
            } catch (io.grpc.StatusRuntimeException e) {
                // busy: ask again
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no resync of " + id + " seen in its middle on " + node + " within 60 s; last seen: " + seen
                + "\n" + f.cluster.agent(node).child.stderr().lines().filter(l -> l.contains(id) && !l.contains("call: ")).toList());
    }

    static byte[] sum(Path file) throws Exception {
        var digest = MessageDigest.getInstance("SHA-256");
        try (var in = Files.newInputStream(file)) {
            byte[] buf = new byte[(int) MIB];
            for (int n = in.read(buf); n > 0; n = in.read(buf)) digest.update(buf, 0, n);
        }
        return digest.digest();
    }

    static String sha256(Path file) throws Exception {
        return java.util.HexFormat.of().formatHex(sum(file));
    }
}
