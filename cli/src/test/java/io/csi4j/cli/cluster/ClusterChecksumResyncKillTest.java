package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.DeleteVolumeRequest;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.List;
import java.util.Random;
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

    static FailoverPair fx;
    // --failover-after 2m, the controller's default: no primary is lost here
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, 120, List.of("node-a", "node-b", "node-c"), "4M"));

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
        // what C's point lacks: the resync's 16 MiB ("second")
        var v = ThreeCopies.withFullRoundsToCThenB(fx, "resync-kill", onA -> write(onA.resolve("first"), 8, 1),
                onA -> write(onA.resolve("second"), 16, 2));
        String id = v.id(), a = v.a(), b = v.b(), c = v.c();
        String held = v.toC().getPoint();
        v.handoffToB();                                     // C follows B by itself and resyncs

        var killed = KillMidCopy.midResync(fx, c, id);
        String after = killed.point();
        System.out.printf("%s killed mid-resync: its state names %s (it held %s)%n", c, after, held);
        assertTrue(after.equals(held) || after.endsWith("-" + b), "the previous point or one " + b + " cut: " + after);
        // the copy is byte for byte the point its state names, compared with the cutting node's snapshot of it while kept
        boolean compared = KillMidCopy.assertImageIsPoint(fx, c, after, after.equals(held) ? a : b, sha256(KillMidCopy.image(fx, c, id)));
        System.out.printf("compared with the point as cut: %s%n", compared);
        KillMidCopy.restartedClean(fx, c);
        assertEquals(after, fx.point(c, id), "the start keeps the point the state names");

        var next = fx.round(c, b, id);
        System.out.printf("the round after the kill (%d ms later): %d bytes since %s%n", (System.nanoTime() - killed.at()) / 1_000_000,
                next.getBytesReceived(), next.getBasePoint());
        assertEquals(after, next.getBasePoint(), "against the point it holds: by checksums, or a delta");
        assertTrue(next.getBytesReceived() < v.toC().getBytesReceived() + 16 * MIB, "not a full copy: " + next.getBytesReceived());
        if (after.equals(held)) {
            assertTrue(fx.cluster.agent(c).child.stderr().lines().anyMatch(l -> l.contains("now holds point " + next.getPoint())
                    && l.contains("since " + held + " (by checksums)")), "the round after the kill is a resync by checksums again");
        }
        assertEquals(List.of(), fx.tmpFiles(c));

        // C serves B's data: every record and both files byte-identical
        fx.controllerUnpublish(b, id);
        fx.controllerPublish(c, id);
        Path onC = fx.stageAndPublish(c, id);
        try {
            KillMidCopy.assertServes(onC, ThreeCopies.RECORDS, v.first(), v.second());
        } finally {
            fx.unpublishAndUnstage(c, id);
        }
        fx.controllerUnpublish(c, id);
        fx.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        assertEquals(List.of(), ReplicaFixture.loops(id));
    }

    static byte[] sum(Path file) throws Exception {
        return ClusterHandoffBaseTest.sum(file);
    }

    static String sha256(Path file) throws Exception {
        return java.util.HexFormat.of().formatHex(sum(file));
    }
}
