package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.SyncReplicaResponse;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.proto.csi.VolumeCapability;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A round of a volume nobody changed since the point its secondary holds keeps that point (nothing cut, nothing
 * copied: docs/replication.md, "A round of an unchanged volume"), and never skips a change: real processes (a
 * controller and three image-engine agents over mutual TLS). After a full round, a round of the unstaged, unwritten
 * volume answers the held point with 0 bytes; one byte written through the primary's mount (fsynced, then unstaged)
 * makes the next round a delta against the held point that carries it, read back from a read-only stage of the
 * secondary's copy; a round of a staged primary always cuts (its filesystem's freeze and thaw write its superblock).
 */
class ClusterUnchangedRoundTest {
    static final long MIB = ReplicaFixture.MIB;
    static final long AT = 12_345;

    static ReplicaFixture f;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> f = new ReplicaFixture(dir, List.of("--copy-bandwidth", "64M"), List.of()));

    @Test
    void anIdleVolumesRoundKeepsItsPointAndOneByteWrittenIsCarried() throws Exception {
        String id = f.csi().createVolume(ReplicaFixture.replicated("unchanged-round", 2, 64 * MIB)).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0), b = parsed.tags().get(1);
        byte[] data = new byte[(int) MIB];
        new Random(28).nextBytes(data);
        onPrimary(a, id, ch -> ch.write(ByteBuffer.wrap(data), 0));

        SyncReplicaResponse first = f.round(b, a, id);
        assertTrue(first.getBytesReceived() > MIB, "the first round carries the data: " + first);
        SyncReplicaResponse idle = f.round(b, a, id);
        assertEquals(first.getPoint(), idle.getPoint(), "an unchanged volume's round keeps the held point: " + idle);
        assertEquals(0, idle.getBytesReceived(), idle.toString());
        assertEquals(first.getPoint(), idle.getBasePoint(), idle.toString());

        // one byte, fsynced through the mount: the next round carries it
        byte changed = (byte) (data[(int) AT] ^ 0x5a);
        onPrimary(a, id, ch -> ch.write(ByteBuffer.wrap(new byte[] {changed}), AT));
        SyncReplicaResponse carried = f.round(b, a, id);
        assertNotEquals(first.getPoint(), carried.getPoint(), "a changed volume gets a new point: " + carried);
        assertEquals(first.getPoint(), carried.getBasePoint(), "a delta against the held point: " + carried);
        assertTrue(carried.getBytesReceived() > 0 && carried.getBytesReceived() < first.getBytesReceived(), carried.toString());
        assertEquals(changed, onSecondary(b, id), "the secondary's copy holds the byte");
        SyncReplicaResponse idleAgain = f.round(b, a, id);
        assertEquals(carried.getPoint(), idleAgain.getPoint(), idleAgain.toString());
        assertEquals(0, idleAgain.getBytesReceived(), idleAgain.toString());

        // staged on the primary, even unwritten: every round cuts (the freeze and thaw write the superblock)
        f.controllerPublish(a, id);
        f.stage(a, id);
        try {
            SyncReplicaResponse staged = f.round(b, a, id);
            assertNotEquals(carried.getPoint(), staged.getPoint(), "a staged primary's round cuts: " + staged);
            assertTrue(staged.getBytesReceived() > 0, staged.toString());
        } finally {
            f.node(a).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                    .setStagingTargetPath(CLUSTER.dir().resolve("staging-" + a).resolve(id).toString()).build());
            f.csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(a).build());
        }
        System.out.printf("rounds of %s: full %d bytes, unchanged %d, one byte written %d, unchanged %d%n", id,
                first.getBytesReceived(), idle.getBytesReceived(), carried.getBytesReceived(), idleAgain.getBytesReceived());
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        assertEquals(List.of(), ReplicaFixture.loops(id));
    }

    interface Write {
        void to(FileChannel channel) throws Exception;
    }

    /** Published and staged on the primary: {@code write} to the file "data", fsynced; then unpublished and unstaged. */
    static void onPrimary(String primary, String id, Write write) throws Exception {
        f.controllerPublish(primary, id);
        Path target = f.publish(primary, id, f.stage(primary, id));
        try (var ch = FileChannel.open(target.resolve("data"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            write.to(ch);
            ch.force(true);
        } finally {
            f.unpublishAndUnstage(primary, id);
        }
    }

    /** The byte at {@link #AT} of "data" in a read-only stage of the secondary's copy. */
    static byte onSecondary(String secondary, String id) throws Exception {
        Path staging = Files.createDirectories(CLUSTER.dir().resolve("ro-" + secondary).resolve(id));
        var readOnly = ReplicaFixture.ext4().toBuilder().setAccessMode(VolumeCapability.AccessMode.newBuilder()
                .setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_READER_ONLY)).build();
        f.node(secondary).nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setVolumeCapability(readOnly).build());
        try (var ch = FileChannel.open(staging.resolve("data"), StandardOpenOption.READ)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            ch.read(one, AT);
            return one.get(0);
        } finally {
            f.node(secondary).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                    .setStagingTargetPath(staging.toString()).build());
        }
    }
}
