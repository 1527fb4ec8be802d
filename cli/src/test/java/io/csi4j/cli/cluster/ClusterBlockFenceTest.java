package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.RECORD;
import static io.csi4j.cli.cluster.ClusterReplicationTest.record;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.VolumeCapability;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 28's fence for a replicated BLOCK volume, with real processes ({@link FailoverPair}): a pod holds the published
 * device node of the primary A open and writes records through it; A's agent is SIGSTOPped, the volume fails over to
 * B, A's agent is SIGCONTed. A's copy must be fenced and the pod's next write refused (EPERM: the loop device's
 * BLKROSET), through the descriptor it held open all along; B serves exactly the last round's records.
 */
class ClusterBlockFenceTest {
    static final long FENCE_BOUND_S = 45;
    static final long MIB = 1L << 20;

    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, 8));

    static VolumeCapability block() {
        return VolumeCapability.newBuilder().setBlock(VolumeCapability.BlockVolume.getDefaultInstance())
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
    }

    static void writeRecords(FileChannel device, int from, int to) throws IOException {
        for (int seq = from; seq < to; seq++) device.write(ByteBuffer.wrap(record(seq)), (long) seq * RECORD);
        device.force(true);
    }

    /** Records 0..count-1 byte-identical at the device's start, and the next record's place still zeros. */
    static void assertRecords(Path device, int count) throws IOException {
        try (var ch = FileChannel.open(device, StandardOpenOption.READ)) {
            ByteBuffer all = ByteBuffer.allocate((count + 1) * RECORD);
            while (all.hasRemaining() && ch.read(all, all.position()) > 0) { /* read on */ }
            for (int seq = 0; seq < count; seq++) {
                assertArrayEquals(record(seq), java.util.Arrays.copyOfRange(all.array(), seq * RECORD, (seq + 1) * RECORD), "record " + seq);
            }
            assertArrayEquals(new byte[RECORD], java.util.Arrays.copyOfRange(all.array(), count * RECORD, (count + 1) * RECORD),
                    "nothing after the last round's records");
        }
    }

    /** The pod: one record at a time through the device it holds open, each fsynced, until a write fails. */
    static FailoverPair.Pod writer(FileChannel device, int from) {
        return new FailoverPair.Pod("writer", (bytes, offset) -> {
            device.write(bytes, offset);
            device.force(true);
        }, from);
    }

    @Test
    void aFencedBlockVolumesWriterIsRefusedThroughTheDeviceItHeldOpen() throws Exception {
        fx.cluster.awaitEveryNode();
        String id = fx.csi().createVolume(CreateVolumeRequest.newBuilder().setName("block-fence").addVolumeCapabilities(block())
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(64 * MIB))
                .putParameters("csi4j.io/replicas", "2").putParameters("csi4j.io/replication-interval", "24h").build())
                .getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0);
        String b = parsed.tags().get(1);
        var agentA = fx.cluster.agent(a);
        boolean aPublished = false;
        boolean bPublished = false;
        boolean stopped = false;
        FailoverPair.Pod writer = null;
        FileChannel device = null;
        try {
            fx.controllerPublish(a, id, block());
            Path onA = fx.stageAndPublish(a, id, block());
            aPublished = true;
            device = FileChannel.open(onA, StandardOpenOption.READ, StandardOpenOption.WRITE);
            writeRecords(device, 0, 2000);
            fx.round(b, a, id);                                    // the last complete point: records 0..1999
            writeRecords(device, 2000, 2500);                   // after it: a failover costs them

            agentA.child.signal("STOP");
            stopped = true;
            writer = writer(device, 2500).start("block-writer-on-" + a);
            fx.publishRetryingWhileUnavailable(b, id, block());
            assertTrue(fx.state(b, id).contains("\"PRIMARY\""), fx.state(b, id));
            int firstAfterFailover = writer.next.get();
            Thread.sleep(2000);
            assertTrue(writer.stoppedBy.get() == null && writer.next.get() > firstAfterFailover,
                    "the writer on " + a + " kept writing while its agent was stopped: " + writer.stoppedBy.get());

            agentA.child.signal("CONT");
            stopped = false;
            long contNs = System.nanoTime();
            long fencedNs = fx.awaitFencedAndPodStopped(a, id, writer, contNs, FENCE_BOUND_S, "SIGCONT");
            writer.join();
            IOException refused = writer.stoppedBy.get();
            assertTrue(String.valueOf(refused.getMessage()).contains("Operation not permitted"), "EPERM: " + refused);
            final FileChannel held = device;
            var again = org.junit.jupiter.api.Assertions.assertThrows(IOException.class, () -> held.write(ByteBuffer.wrap(record(0)), 0));
            assertTrue(String.valueOf(again.getMessage()).contains("Operation not permitted"), again.toString());
            System.out.printf("block fence of %s: after SIGCONT %s was FENCED in %d ms and its writer refused (EPERM) in %d ms;"
                    + " %d records written on %s after the failover%n", id, a, (fencedNs - contNs) / 1_000_000,
                    (writer.stoppedAt - contNs) / 1_000_000, writer.next.get() - firstAfterFailover, a);

            Path onB = fx.stageAndPublish(b, id, block());
            bPublished = true;
            assertRecords(onB, 2000);
        } finally {
            if (writer != null) writer.stop();
            if (device != null) device.close();
            if (stopped) agentA.child.signal("CONT");
            if (aPublished) fx.unpublishAndUnstage(a, id);
            if (bPublished) fx.unpublishAndUnstage(b, id);
        }
    }
}
