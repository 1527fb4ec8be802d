package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.csi4j.proto.cluster.SyncReplicaResponse;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The fenced recipe of the resync tests on a {@link FailoverPair}: a two-replica volume of 96 MiB published and staged
 * on its primary A, the test's data and records 0..1999 written there and a full round to B; A's agent SIGKILLed and
 * the volume failed over to B (the test picks how); writes through A's mount that no point has, and B's own; A started
 * again with its data dir and its mounts (left by the kill): FENCED; its old pod's mounts taken down, after which it
 * follows B by itself; a handoff back to A serves B's data, none of A's writes after the failover. The test's steps in
 * between are its scenario. Closing it (try-with-resources) starts A again if it is down and takes down the mounts left.
 */
final class FencedRecipe implements AutoCloseable {
    /** The records on A at the full round: what B serves after the failover. */
    static final int RECORDS = 2000;

    final FailoverPair fx;
    final String id;
    final String a;
    final String b;
    final FailoverPair.Mounted mounted;
    /** A's mount: after the failover it still takes writes. */
    final Path onA;
    final SyncReplicaResponse full;
    /** The SHA-256 the test's data writer returned. */
    final byte[] data;

    private FencedRecipe(FailoverPair fx, String id, String a, String b, FailoverPair.Mounted mounted, Path onA,
                         SyncReplicaResponse full, byte[] data) {
        this.fx = fx;
        this.id = id;
        this.a = a;
        this.b = b;
        this.mounted = mounted;
        this.onA = onA;
        this.full = full;
        this.data = data;
    }

    /** Created, published and staged on A, {@code data} and the records written, the full round to B done (its bytes printed). */
    static FencedRecipe fullRoundToB(FailoverPair fx, String name, FailoverPair.Data data) throws Exception {
        // 96 MiB: each agent's pool is 1 GiB and a round promises the volume's size again for the image it builds
        var v = fx.createReplicated(name, 96L << 20);
        String id = v.id(), a = v.primary(), b = v.secondary();
        var mounted = fx.mounted(id, a);
        try {
            fx.controllerPublish(a, id);
            Path onA = mounted.on(a);
            byte[] sum = data.write(onA);
            writeRecords(onA.resolve("records"), 0, RECORDS);
            var full = fx.round(b, a, id);
            System.out.printf("%s: full round from %s to %s: %d bytes%n", id, a, b, full.getBytesReceived());
            return new FencedRecipe(fx, id, a, b, mounted, onA, full, sum);
        } catch (Exception | Error e) {
            try {
                mounted.close();
            } catch (Exception | Error more) {
                e.addSuppressed(more);
            }
            throw e;
        }
    }

    /** B's mount (the CO published it there): it serves every record up to the full round. */
    Path stagedOnB() throws Exception {
        Path onB = mounted.on(b);
        assertRecords(onB.resolve("records"), RECORDS);
        return onB;
    }

    /**
     * A started again with its data dir and its mounts: FENCED within {@code boundSeconds}; then its old pod's mounts
     * go (the CO's clean-up), after which it follows B by itself. Returns when they went (a System.nanoTime).
     */
    long restartedFencedThenUnstaged(long boundSeconds) throws Exception {
        fx.cluster.agent(a).start();
        fx.cluster.awaitEveryNode();
        fx.awaitReplica(a, id, boundSeconds, r -> r.getRole().equals("FENCED"));
        mounted.off(a);
        return System.nanoTime();
    }

    /**
     * A handoff back to A (B's pod gone first): ControllerUnpublishVolume from B, ControllerPublishVolume on A (retried
     * while a round is under way); A is the primary of epoch 3, and its mount holds none of its writes after the
     * failover (the file "after-failover"). Returns that mount.
     */
    Path handedBackToA() throws Exception {
        fx.controllerUnpublish(b, id);
        Path back = mounted.handedTo(a, 3);
        assertFalse(Files.exists(back.resolve("after-failover")), "A's write after the failover is discarded");
        return back;
    }

    /** A's pod gone, the volume deleted: no loop device left on its files. */
    void deleted() throws Exception {
        mounted.gone(a);
        fx.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        assertEquals(List.of(), ReplicaFixture.loops(id));
    }

    @Override
    public void close() throws Exception {
        mounted.close();
    }
}
