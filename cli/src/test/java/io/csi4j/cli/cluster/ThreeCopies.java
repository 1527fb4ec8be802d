package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.replicated;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.SyncReplicaResponse;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import java.nio.file.Path;
import java.util.List;

/**
 * The set-up of the resync-by-checksums tests on a three-node {@link FailoverPair}: a three-replica volume of 96 MiB
 * published and staged on its primary A; the test's first data and records 0..1999 written there, a full round to C;
 * its second data and records 2000..2299, a full round to B. Each point is cut by A for one secondary, so C holds a
 * point that B, the copy with the newest one, never had: once B is primary, C's first round from B is a resync.
 *
 * @param first  the SHA-256 the test's first data writer returned (null if it wrote nothing to compare)
 * @param second the same of the second
 */
record ThreeCopies(FailoverPair fx, String id, String a, String b, String c, SyncReplicaResponse toC, SyncReplicaResponse toB,
                   byte[] first, byte[] second) {
    /** The records written through A's mount. */
    static final int RECORDS = 2300;

    /** Created, published and staged on A, the two full rounds done (their bytes printed). */
    static ThreeCopies withFullRoundsToCThenB(FailoverPair fx, String name, FailoverPair.Data beforeC, FailoverPair.Data beforeB)
            throws Exception {
        // 96 MiB: each agent's pool is 1 GiB and a round promises the volume's size again for the image it builds
        String id = fx.csi().createVolume(replicated(name, 3, "24h").setCapacityRange(CapacityRange.newBuilder()
                .setRequiredBytes(96L << 20)).build()).getVolume().getVolumeId();
        var tags = ReplicatedVolumeId.parse(id).orElseThrow().tags();
        String a = tags.get(0), b = tags.get(1), c = tags.get(2);
        fx.controllerPublish(a, id);
        Path onA = fx.stageAndPublish(a, id);
        byte[] first = beforeC.write(onA);
        writeRecords(onA.resolve("records"), 0, 2000);
        var toC = fx.round(c, a, id);
        byte[] second = beforeB.write(onA);
        writeRecords(onA.resolve("records"), 2000, RECORDS);
        var toB = fx.round(b, a, id);
        System.out.printf("%s: full rounds from %s: %d bytes to %s, %d bytes to %s%n", id, a, toC.getBytesReceived(), c,
                toB.getBytesReceived(), b);
        return new ThreeCopies(fx, id, a, b, c, toC, toB, first, second);
    }

    /**
     * The planned handoff A -> B: A's pod gone (node-side, then ControllerUnpublishVolume), ControllerPublishVolume on B
     * (B pulls A's final point as a delta against its own); B is the primary. Returns when the publish on B started.
     */
    long handoffToB() throws Exception {
        fx.unpublishAndUnstage(a, id);
        fx.controllerUnpublish(a, id);
        long handed = System.nanoTime();
        fx.controllerPublish(b, id);
        assertEquals("PRIMARY", fx.replica(b, id).getRole());
        return handed;
    }

    /** A back (a killed pod's mounts cleaned up as kubelet would), the volume unpublished everywhere and deleted. */
    void cleanUp() throws Exception {
        fx.restartIfDown(a);
        fx.unpublishAndUnstage(a, id);             // idempotent: nothing when already done
        for (String n : List.of(a, b, c)) fx.retrying(() -> fx.controllerUnpublish(n, id), "unpublish from " + n);
        fx.retrying(() -> fx.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build()), "delete");
    }
}
