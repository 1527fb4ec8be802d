package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.RECORD;
import static io.csi4j.cli.cluster.ClusterReplicationTest.record;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.VolumeCapability;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 28's fence for a replicated BLOCK volume, with real processes ({@link FailoverPair}): a pod holds the published
 * device node of the primary A open and writes records through it; A's agent is SIGSTOPped, the volume fails over to
 * B, A's agent is SIGCONTed. A's copy must be fenced and the pod's next write refused (EPERM: the loop device's
 * BLKROSET), through the descriptor it held open all along; B serves exactly the last round's records.
 */
class ClusterBlockFenceTest {
    static final long FENCE_BOUND_S = 45;
    static final long MIB = 1L << 20;

    @TempDir
    static Path tmp;
    static FailoverPair fx;

    @BeforeAll
    static void start() throws Exception {
        Privileged.requireRoot();
        fx = new FailoverPair(tmp, 8);
    }

    @AfterAll
    static void stop() throws Exception {
        if (fx != null) fx.close();
    }

    static VolumeCapability block() {
        return VolumeCapability.newBuilder().setBlock(VolumeCapability.BlockVolume.getDefaultInstance())
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
    }

    Path stageAndPublishBlock(String node, String id) throws Exception {
        String staging = fx.staging(node, id).toString();
        fx.node(node).nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging)
                .setVolumeCapability(block()).build());
        Path target = fx.target(node, id);
        fx.node(node).nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging)
                .setTargetPath(target.toString()).setVolumeCapability(block()).build());
        return target;
    }

    void controllerPublishBlock(String node, String id) {
        fx.csi().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(node)
                .setVolumeCapability(block()).build());
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
    static final class Writer implements Runnable {
        final FileChannel device;
        final AtomicInteger next;
        final AtomicReference<IOException> stoppedBy = new AtomicReference<>();
        volatile long stoppedAt;
        volatile boolean quit;

        Writer(FileChannel device, int from) {
            this.device = device;
            this.next = new AtomicInteger(from);
        }

        @Override
        public void run() {
            while (!quit) {
                int seq = next.get();
                try {
                    device.write(ByteBuffer.wrap(record(seq)), (long) seq * RECORD);
                    device.force(true);
                } catch (IOException e) {
                    stoppedAt = System.nanoTime();
                    stoppedBy.set(e);
                    return;
                }
                next.incrementAndGet();
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
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
        Writer writer = null;
        Thread writerThread = null;
        FileChannel device = null;
        try {
            controllerPublishBlock(a, id);
            Path onA = stageAndPublishBlock(a, id);
            aPublished = true;
            device = FileChannel.open(onA, StandardOpenOption.READ, StandardOpenOption.WRITE);
            writeRecords(device, 0, 2000);
            fx.round(b, a, id);                                    // the last complete point: records 0..1999
            writeRecords(device, 2000, 2500);                   // after it: a failover costs them

            agentA.child.signal("STOP");
            stopped = true;
            writer = new Writer(device, 2500);
            writerThread = Thread.ofPlatform().name("block-writer-on-" + a).start(writer);

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (true) {
                try {
                    controllerPublishBlock(b, id);
                    break;
                } catch (StatusRuntimeException e) {
                    if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() > deadline) throw e;
                    Thread.sleep(1000);
                }
            }
            assertTrue(fx.state(b, id).contains("\"PRIMARY\""), fx.state(b, id));
            int firstAfterFailover = writer.next.get();
            Thread.sleep(2000);
            assertTrue(writer.stoppedBy.get() == null && writer.next.get() > firstAfterFailover,
                    "the writer on " + a + " kept writing while its agent was stopped: " + writer.stoppedBy.get());

            agentA.child.signal("CONT");
            stopped = false;
            long contNs = System.nanoTime();
            long fencedNs = 0;
            long bound = contNs + TimeUnit.SECONDS.toNanos(FENCE_BOUND_S);
            while (fencedNs == 0 || writer.stoppedBy.get() == null) {
                if (fencedNs == 0 && fx.state(a, id).contains("\"FENCED\"")) fencedNs = System.nanoTime();
                if (System.nanoTime() > bound) {
                    throw new AssertionError("within " + FENCE_BOUND_S + " s of SIGCONT: state of " + a + " " + fx.state(a, id)
                            + ", writer stopped by " + writer.stoppedBy.get());
                }
                Thread.sleep(100);
            }
            writerThread.join(TimeUnit.SECONDS.toMillis(30));
            IOException refused = writer.stoppedBy.get();
            assertTrue(String.valueOf(refused.getMessage()).contains("Operation not permitted"), "EPERM: " + refused);
            final FileChannel held = device;
            var again = org.junit.jupiter.api.Assertions.assertThrows(IOException.class, () -> held.write(ByteBuffer.wrap(record(0)), 0));
            assertTrue(String.valueOf(again.getMessage()).contains("Operation not permitted"), again.toString());
            System.out.printf("block fence of %s: after SIGCONT %s was FENCED in %d ms and its writer refused (EPERM) in %d ms;"
                    + " %d records written on %s after the failover%n", id, a, (fencedNs - contNs) / 1_000_000,
                    (writer.stoppedAt - contNs) / 1_000_000, writer.next.get() - firstAfterFailover, a);

            Path onB = stageAndPublishBlock(b, id);
            bPublished = true;
            assertRecords(onB, 2000);
        } finally {
            if (writer != null) writer.quit = true;
            if (writerThread != null) writerThread.join(TimeUnit.SECONDS.toMillis(30));
            if (device != null) device.close();
            if (stopped) agentA.child.signal("CONT");
            if (aPublished) fx.unpublishAndUnstage(a, id);
            if (bPublished) fx.unpublishAndUnstage(b, id);
        }
    }
}
