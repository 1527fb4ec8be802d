package io.csi4j.driver.csi;

import static io.csi4j.driver.csi.Wire.MIB;
import static io.csi4j.driver.csi.Wire.block;
import static io.csi4j.driver.csi.Wire.fails;
import static io.csi4j.driver.csi.Wire.mount;
import static io.csi4j.driver.csi.Wire.publish;
import static io.csi4j.driver.csi.Wire.stage;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.proto.addons.identity.Capability;
import io.csi4j.proto.addons.identity.GetCapabilitiesRequest;
import io.csi4j.proto.addons.reclaimspace.ControllerReclaimSpaceRequest;
import io.csi4j.proto.addons.reclaimspace.NodeReclaimSpaceRequest;
import io.csi4j.proto.addons.reclaimspace.NodeReclaimSpaceResponse;
import io.csi4j.proto.addons.reclaimspace.ReclaimSpaceControllerGrpc;
import io.csi4j.proto.addons.reclaimspace.ReclaimSpaceNodeGrpc;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.proto.csi.VolumeCapability;
import io.grpc.Status;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * CSI-Addons NodeReclaimSpace over the plugin's real CSI-Addons socket, on an XFS reflink pool: a 1 GiB file
 * deleted in a mounted ext4 volume comes back to the pool after the reclaim, and the data that stays is intact
 * (checksums before, and after a full unstage and stage again so nothing is read from a cache).
 */
@ExtendWith(LeakCheck.class)
class ReclaimSpaceSocketTest {
    private static final long GIB = 1L << 30;
    @RegisterExtension
    static final ServedImagePool POOL = ServedImagePool.ofBytes(4 * GIB);

    private static ServedDriver served() { return POOL.served(); }

    private static Path nodeDir() { return POOL.nodeDir(); }

    private static ReclaimSpaceNodeGrpc.ReclaimSpaceNodeBlockingStub reclaim() {
        return ReclaimSpaceNodeGrpc.newBlockingStub(served().addonsChannel()).withDeadlineAfter(2, TimeUnit.MINUTES);
    }

    private static String volume(String name, long size, VolumeCapability cap) {
        return io.csi4j.proto.csi.ControllerGrpc.newBlockingStub(served().channel()).withDeadlineAfter(2, TimeUnit.MINUTES)
                .createVolume(CreateVolumeRequest.newBuilder().setName(name).setCapacityRange(Wire.range(size, 0))
                        .addVolumeCapabilities(cap).build()).getVolume().getVolumeId();
    }

    private static io.csi4j.proto.csi.NodeGrpc.NodeBlockingStub node() {
        return io.csi4j.proto.csi.NodeGrpc.newBlockingStub(served().channel()).withDeadlineAfter(2, TimeUnit.MINUTES);
    }

    private static long poolUsed() {
        FsStats fs = FsStats.of(served().driver().engine().pool().path());
        return fs.totalBytes() - fs.freeBytes();
    }

    @Test
    void advertisesOnlineAndOfflineReclaim() {
        var caps = io.csi4j.proto.addons.identity.IdentityGrpc.newBlockingStub(served().addonsChannel())
                .getCapabilities(GetCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList();
        assertTrue(caps.stream().anyMatch(c -> c.getReclaimSpace().getType() == Capability.ReclaimSpace.Type.ONLINE), caps.toString());
        assertTrue(caps.stream().anyMatch(c -> c.getReclaimSpace().getType() == Capability.ReclaimSpace.Type.OFFLINE), caps.toString());
        assertTrue(caps.stream().anyMatch(c -> c.getService().getType() == Capability.Service.Type.NODE_SERVICE), caps.toString());
        assertTrue(caps.stream().anyMatch(c -> c.getService().getType() == Capability.Service.Type.CONTROLLER_SERVICE), caps.toString());
    }

    private static ReclaimSpaceControllerGrpc.ReclaimSpaceControllerBlockingStub offline() {
        return ReclaimSpaceControllerGrpc.newBlockingStub(served().addonsChannel()).withDeadlineAfter(2, TimeUnit.MINUTES);
    }

    /** Nothing of a reclaim stays: no loop device on the image, no mount anywhere that names it or the pool's .tmp. */
    private static void assertNothingLeftBy(String id) throws IOException {
        assertEquals(List.of(), io.csi4j.driver.os.LoopDevice.findByBackingFile(served().image(id)), "loop devices of " + id);
        String mounts = Files.readString(Path.of("/proc/self/mountinfo"));
        assertFalse(mounts.contains(".reclaim"), mounts);
        try (var left = Files.list(served().driver().engine().pool().path().resolve(".tmp"))) {
            assertEquals(List.of(), left.toList(), "the pool's .tmp is empty again");
        }
    }

    @Test
    void offlineReclaimOfAVolumeNobodyStages() throws Exception {
        VolumeCapability cap = mount("xfs");
        String id = volume("offline", GIB + 512 * MIB, cap);
        // blank: nothing to give back, and nothing left behind
        var blank = offline().controllerReclaimSpace(ControllerReclaimSpaceRequest.newBuilder().setVolumeId(id).build());
        assertEquals(blank.getPreUsage().getUsageBytes(), blank.getPostUsage().getUsageBytes());
        assertNothingLeftBy(id);

        Path staging = nodeDir().resolve("staging");
        node().nodeStageVolume(stage(id, staging, cap));
        String kept = writeRandom(staging.resolve("keep.bin"), 32 * MIB, 3);
        writeRandom(staging.resolve("big.bin"), GIB, 4);
        sync(staging);   // the gigabyte reaches the image before it is deleted
        Files.delete(staging.resolve("big.bin"));
        node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
        long poolBefore = poolUsed();

        var r = offline().controllerReclaimSpace(ControllerReclaimSpaceRequest.newBuilder().setVolumeId(id).build());
        long freed = r.getPreUsage().getUsageBytes() - r.getPostUsage().getUsageBytes();
        long poolFreed = poolBefore - poolUsed();
        System.out.printf("offline reclaim: pre %d, post %d (freed %d MiB); pool used fell by %d MiB%n",
                r.getPreUsage().getUsageBytes(), r.getPostUsage().getUsageBytes(), freed / MIB, poolFreed / MIB);
        assertTrue(freed > 900 * MIB, "the image gave back about 1 GiB: " + freed);
        assertTrue(poolFreed > 900 * MIB, "the pool's usage fell by about 1 GiB: " + poolFreed);
        assertNothingLeftBy(id);

        node().nodeStageVolume(stage(id, staging, cap));
        assertEquals(kept, sha256(staging.resolve("keep.bin")), "the data that stays is intact");
        // staged: the controller's reclaim trims it where it is mounted
        offline().controllerReclaimSpace(ControllerReclaimSpaceRequest.newBuilder().setVolumeId(id).build());
        node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());

        String dev = volume("offline-dev", 16 * MIB, block());
        fails(Status.Code.FAILED_PRECONDITION, () -> offline().controllerReclaimSpace(ControllerReclaimSpaceRequest.newBuilder().setVolumeId(dev).build()));
        fails(Status.Code.NOT_FOUND, () -> offline().controllerReclaimSpace(ControllerReclaimSpaceRequest.newBuilder().setVolumeId("vol-node-a-nosuch").build()));
        fails(Status.Code.INVALID_ARGUMENT, () -> offline().controllerReclaimSpace(ControllerReclaimSpaceRequest.getDefaultInstance()));
    }

    @Test
    void aDeletedGigabyteGoesBackToThePoolAndTheRestStays() throws Exception {
        VolumeCapability cap = mount("ext4");
        String id = volume("reclaim", 2 * GIB, cap);
        Path staging = nodeDir().resolve("staging");
        Path target = nodeDir().resolve("target");
        node().nodeStageVolume(stage(id, staging, cap));
        node().nodePublishVolume(publish(id, staging, target, cap));

        Path keep = target.resolve("keep.bin");
        String kept = writeRandom(keep, 64 * MIB, 1);
        writeRandom(target.resolve("big.bin"), GIB, 2);
        sync(target);
        long poolBefore = poolUsed();
        Files.delete(target.resolve("big.bin"));
        sync(target);

        NodeReclaimSpaceResponse r = reclaim().nodeReclaimSpace(NodeReclaimSpaceRequest.newBuilder().setVolumeId(id)
                .setVolumePath(target.toString()).setStagingTargetPath(staging.toString()).setVolumeCapability(cap).build());
        long freed = r.getPreUsage().getUsageBytes() - r.getPostUsage().getUsageBytes();
        long poolFreed = poolBefore - poolUsed();
        System.out.printf("reclaim: pre %d, post %d (freed %d MiB); pool used fell by %d MiB%n", r.getPreUsage().getUsageBytes(),
                r.getPostUsage().getUsageBytes(), freed / MIB, poolFreed / MIB);
        assertTrue(freed > 900 * MIB, "the image gave back about 1 GiB: " + freed);
        assertTrue(poolFreed > 900 * MIB, "the pool's usage fell by about 1 GiB: " + poolFreed);
        long allocated = io.csi4j.driver.os.FileStat.of(served().image(id)).allocatedBytes();
        assertTrue(Math.abs(allocated - r.getPostUsage().getUsageBytes()) < 16 * MIB,
                "post_usage is the image's allocated bytes: " + r.getPostUsage().getUsageBytes() + " vs " + allocated);

        // again at the staging path: nothing more to give, still OK
        reclaim().nodeReclaimSpace(NodeReclaimSpaceRequest.newBuilder().setVolumeId(id).setVolumePath(staging.toString()).build());

        // the data that stays is intact, read back from the device after unstage and stage
        node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target.toString()).build());
        node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
        node().nodeStageVolume(stage(id, staging, cap));
        assertEquals(kept, sha256(staging.resolve("keep.bin")));
        node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
    }

    @Test
    void refusesBlockVolumesUnknownVolumesAndForeignPaths() {
        String dev = volume("reclaim-dev", 16 * MIB, block());
        Path staging = nodeDir().resolve("staging-dev");
        Path target = nodeDir().resolve("target-dev");
        node().nodeStageVolume(stage(dev, staging, block()));
        node().nodePublishVolume(publish(dev, staging, target, block()));
        Status refused = fails(Status.Code.FAILED_PRECONDITION, () -> reclaim().nodeReclaimSpace(NodeReclaimSpaceRequest.newBuilder()
                .setVolumeId(dev).setVolumePath(target.toString()).build()));
        assertTrue(refused.getDescription().contains("block volume"), refused.getDescription());
        node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(dev).setTargetPath(target.toString()).build());
        node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(dev).setStagingTargetPath(staging.toString()).build());

        fails(Status.Code.NOT_FOUND, () -> reclaim().nodeReclaimSpace(NodeReclaimSpaceRequest.newBuilder()
                .setVolumeId("vol-node-a-nosuch").setVolumePath(nodeDir().toString()).build()));
        fails(Status.Code.INVALID_ARGUMENT, () -> reclaim().nodeReclaimSpace(NodeReclaimSpaceRequest.newBuilder()
                .setVolumeId("").setVolumePath(nodeDir().toString()).build()));
        fails(Status.Code.INVALID_ARGUMENT, () -> reclaim().nodeReclaimSpace(NodeReclaimSpaceRequest.newBuilder()
                .setVolumeId(dev).build()));
        // a filesystem volume, but the path is no mount of it: no other filesystem is trimmed in its name
        String fs = volume("reclaim-fs", 32 * MIB, mount("ext4"));
        fails(Status.Code.NOT_FOUND, () -> reclaim().nodeReclaimSpace(NodeReclaimSpaceRequest.newBuilder()
                .setVolumeId(fs).setVolumePath(nodeDir().toString()).build()));
    }

    private static String writeRandom(Path file, long size, long seed) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        byte[] chunk = new byte[(int) MIB];
        Random random = new Random(seed);
        try (OutputStream out = Files.newOutputStream(file)) {
            for (long done = 0; done < size; done += chunk.length) {
                random.nextBytes(chunk);
                out.write(chunk);
                sha.update(chunk);
            }
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    private static String sha256(Path file) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        byte[] chunk = new byte[(int) MIB];
        try (var in = Files.newInputStream(file)) {
            for (int n; (n = in.read(chunk)) > 0; ) sha.update(chunk, 0, n);
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    /** syncfs of the volume's filesystem: the delete reaches the disk before the reclaim. */
    private static void sync(Path dir) throws IOException, InterruptedException {
        assertEquals(0, new ProcessBuilder("sync", "-f", dir.toString()).inheritIO().start().waitFor());
    }
}
