package io.csi4j.cli.reliability;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.proto.csi.*;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 8, disk full. The pool runs out of space while a workload writes and while the plugin creates:
 * every answer is OK or a clear RESOURCE_EXHAUSTED / OUT_OF_RANGE (never INTERNAL or UNKNOWN), nothing
 * half-made is left (no row, no artifact, no temporary file), and the plugin keeps serving: once space is
 * freed, the same calls succeed.
 */
class DiskFullTest {
    static final Set<Status.Code> CLEAR = Set.of(Status.Code.RESOURCE_EXHAUSTED, Status.Code.OUT_OF_RANGE);
    private final List<String> answers = new ArrayList<>();

    /** The image engine on a 400 MiB XFS pool with 10x thin overcommit: block volumes written until the pool is full. */
    @Test
    void imagePoolFullMidWriteAndMidCreate(@TempDir Path tmp) throws Exception {
        Leaks.requireRoot();
        Path data = Files.createDirectories(tmp.resolve("data"));
        Path node = Files.createDirectories(tmp.resolve("kubelet"));
        try (Plugin plugin = Plugin.start(data, "--engine", "image", "--pool-size", "400Mi", "--overcommit-ratio", "10")) {
            var rpc = new Rpc(plugin.channel(), null);
            String a = createBlock(rpc, "full-a"), b = createBlock(rpc, "full-b");
            Path devA = publishBlock(rpc, a, node.resolve("a")), devB = publishBlock(rpc, b, node.resolve("b"));
            long wroteA = fill(devA), wroteB = fill(devB);
            System.out.printf("disk full (image): wrote %d MiB to a, %d MiB to b before the pool was full%n", wroteA >> 20, wroteB >> 20);
            assertTrue(wroteA + wroteB < 512L << 20, "the pool (400 MiB) really ran out");
            Set<String> volumesBefore = ids(rpc);

            // mid-create, with the pool full
            attempt("CreateVolume", () -> rpc.controller().createVolume(CreateVolumeRequest.newBuilder().setName("full-c")
                    .setCapacityRange(Rpc.atLeast(256L << 20)).addVolumeCapabilities(Rpc.mountXfs()).build()));
            attempt("CreateSnapshot", () -> rpc.controller().createSnapshot(CreateSnapshotRequest.newBuilder().setName("full-s")
                    .setSourceVolumeId(a).build()));
            attempt("CreateVolume clone", () -> rpc.controller().createVolume(CreateVolumeRequest.newBuilder().setName("full-clone")
                    .setCapacityRange(Rpc.atLeast(256L << 20)).addVolumeCapabilities(block())
                    .setVolumeContentSource(VolumeContentSource.newBuilder().setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(b)))
                    .build()));
            attempt("ControllerExpandVolume", () -> rpc.controller().controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder()
                    .setVolumeId(a).setCapacityRange(Rpc.atLeast(8L << 30)).build()));
            String c = ids(rpc).stream().filter(id -> !volumesBefore.contains(id)).findFirst().orElse(null);
            if (c != null && answers.contains("CreateVolume OK")) {      // thin: the create may fit; formatting may not
                Path staging = Files.createDirectories(node.resolve("c/staging"));
                attempt("NodeStageVolume (mkfs on a full pool)", () -> rpc.node().nodeStageVolume(NodeStageVolumeRequest.newBuilder()
                        .setVolumeId(c).setStagingTargetPath(staging.toString()).setVolumeCapability(Rpc.mountXfs()).build()));
                rpc.node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(c).setStagingTargetPath(staging.toString()).build());
            }
            System.out.println("disk full (image): " + answers);
            assertTrue(plugin.alive());
            assertNoHalfMadeObjects(rpc, data.resolve("pool"));

            // free space: the plugin serves on, and the creates now succeed
            rpc.node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(b).setTargetPath(node.resolve("b/target").toString()).build());
            rpc.node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(b).setStagingTargetPath(node.resolve("b/staging").toString()).build());
            rpc.controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(b).build());
            for (var s : rpc.controller().listSnapshots(ListSnapshotsRequest.getDefaultInstance()).getEntriesList()) {
                rpc.controller().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(s.getSnapshot().getSnapshotId()).build());
            }
            var snap = rpc.controller().createSnapshot(CreateSnapshotRequest.newBuilder().setName("full-s").setSourceVolumeId(a).build());
            assertTrue(snap.getSnapshot().getReadyToUse());
            rpc.node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(a).setTargetPath(node.resolve("a/target").toString()).build());
            rpc.node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(a).setStagingTargetPath(node.resolve("a/staging").toString()).build());
            assertEquals(0, plugin.stop(30_000));
        } finally {
            Leaks.cleanUp(tmp);
        }
    }

    /**
     * The dir engine on a 64 MiB ext4 filesystem that also holds the catalog: a workload fills it (ENOSPC in
     * the workload), then snapshot copies and catalog writes hit ENOSPC inside the plugin.
     */
    @Test
    void dirEngineDiskFullMidCopyAndInTheCatalog(@TempDir Path tmp) throws Exception {
        Leaks.requireRoot();
        Path image = tmp.resolve("small.img");
        Path small = Files.createDirectories(tmp.resolve("small"));
        try (FileChannel f = FileChannel.open(image, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            f.truncate(64L << 20);
            f.write(ByteBuffer.wrap(new byte[1]), (64L << 20) - 1);
        }
        sh("mkfs.ext4", "-q", "-F", image.toString());
        sh("mount", "-o", "loop", image.toString(), small.toString());
        Path data = small.resolve("data");
        Path node = Files.createDirectories(tmp.resolve("kubelet"));
        try (Plugin plugin = Plugin.start(data, "--engine", "dir")) {
            var rpc = new Rpc(plugin.channel(), null);
            var mount = VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.getDefaultInstance())
                    .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
            String v = rpc.controller().createVolume(CreateVolumeRequest.newBuilder().setName("dir-a")
                    .setCapacityRange(Rpc.atLeast(32L << 20)).addVolumeCapabilities(mount).build()).getVolume().getVolumeId();
            Path staging = Files.createDirectories(node.resolve("staging"));
            Path target = node.resolve("target");
            rpc.node().nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(v).setStagingTargetPath(staging.toString())
                    .setVolumeCapability(mount).build());
            rpc.node().nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(v).setStagingTargetPath(staging.toString())
                    .setTargetPath(target.toString()).setVolumeCapability(mount).build());
            // the workload writes 1 MiB files until ENOSPC
            int files = 0;
            try {
                for (; files < 1000; files++) writeFile(target.resolve("f" + files), 1 << 20);
                fail("a 64 MiB filesystem took 1000 MiB");
            } catch (IOException full) {
                System.out.printf("disk full (dir): the workload got '%s' after %d MiB%n", full.getMessage(), files);
            }
            assertTrue(plugin.alive());
            attempt("CreateVolume (disk full)", () -> rpc.controller().createVolume(CreateVolumeRequest.newBuilder()
                    .setName("dir-b").setCapacityRange(Rpc.atLeast(1L << 20)).addVolumeCapabilities(mount).build()));
            attempt("CreateSnapshot (disk full: the catalog's write and the copy)", () -> rpc.controller().createSnapshot(
                    CreateSnapshotRequest.newBuilder().setName("dir-s0").setSourceVolumeId(v).build()));
            // half of it freed: a snapshot copy of the whole volume cannot fit and fails mid-copy
            for (int i = 0; i < files / 3; i++) Files.deleteIfExists(target.resolve("f" + i));
            attempt("CreateSnapshot (copy runs out of space)", () -> rpc.controller().createSnapshot(CreateSnapshotRequest.newBuilder()
                    .setName("dir-s").setSourceVolumeId(v).build()));
            attempt("CreateVolume clone (copy runs out of space)", () -> rpc.controller().createVolume(CreateVolumeRequest.newBuilder()
                    .setName("dir-clone").addVolumeCapabilities(mount)
                    .setVolumeContentSource(VolumeContentSource.newBuilder().setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(v)))
                    .build()));
            System.out.println("disk full (dir): " + answers);
            assertTrue(plugin.alive());
            assertNoHalfMadeObjects(rpc, data.resolve("pool"));
            // space back: the same calls succeed
            for (int i = 0; i < files; i++) Files.deleteIfExists(target.resolve("f" + i));
            writeFile(target.resolve("small"), 4096);
            var s = rpc.controller().createSnapshot(CreateSnapshotRequest.newBuilder().setName("dir-s").setSourceVolumeId(v).build());
            assertTrue(s.getSnapshot().getReadyToUse());
            rpc.controller().createVolume(CreateVolumeRequest.newBuilder().setName("dir-b").setCapacityRange(Rpc.atLeast(1L << 20))
                    .addVolumeCapabilities(mount).build());
            rpc.node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(v).setTargetPath(target.toString()).build());
            rpc.node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(v).setStagingTargetPath(staging.toString()).build());
            assertEquals(0, plugin.stop(30_000));
        } finally {
            Leaks.cleanUp(tmp);   // unmounts the small filesystem too
        }
    }

    private void attempt(String what, Supplier<?> call) {
        try {
            call.get();
            answers.add(what + " OK");
        } catch (StatusRuntimeException e) {
            answers.add(what + " " + e.getStatus().getCode() + " (" + e.getStatus().getDescription() + ")");
            assertTrue(CLEAR.contains(e.getStatus().getCode()),
                    what + " on a full pool answered " + e.getStatus() + "; expected OK, RESOURCE_EXHAUSTED or OUT_OF_RANGE");
            assertNotNull(e.getStatus().getDescription());
        }
    }

    /** Every listed object has its artifact and vice versa; no temporary file is left. */
    private static void assertNoHalfMadeObjects(Rpc rpc, Path pool) throws IOException {
        Set<String> volumes = ids(rpc);
        Set<String> snapshots = new java.util.TreeSet<>();
        rpc.controller().listSnapshots(ListSnapshotsRequest.getDefaultInstance()).getEntriesList()
                .forEach(e -> snapshots.add(e.getSnapshot().getSnapshotId()));
        assertEquals(volumes, artifacts(pool.resolve("volumes")), "volume artifacts");
        assertEquals(snapshots, artifacts(pool.resolve("snapshots")), "snapshot artifacts");
        try (Stream<Path> tmp = Files.list(pool.resolve(".tmp"))) {
            assertEquals(List.of(), tmp.toList(), "temporary files left by failed creates");
        }
    }

    private static Set<String> artifacts(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> !n.endsWith(".meta"))
                    .map(n -> n.substring(0, n.lastIndexOf('.'))).collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new));
        }
    }

    private static Set<String> ids(Rpc rpc) {
        Set<String> ids = new java.util.TreeSet<>();
        rpc.controller().listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesList().forEach(e -> ids.add(e.getVolume().getVolumeId()));
        return ids;
    }

    private static VolumeCapability block() {
        return VolumeCapability.newBuilder().setBlock(VolumeCapability.BlockVolume.getDefaultInstance())
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
    }

    private static String createBlock(Rpc rpc, String name) {
        return rpc.controller().createVolume(CreateVolumeRequest.newBuilder().setName(name).setCapacityRange(Rpc.atLeast(256L << 20))
                .addVolumeCapabilities(block()).build()).getVolume().getVolumeId();
    }

    private static Path publishBlock(Rpc rpc, String id, Path dir) throws IOException {
        Path staging = Files.createDirectories(dir.resolve("staging"));
        Path target = dir.resolve("target");
        rpc.node().nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setVolumeCapability(block()).build());
        rpc.node().nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(block()).build());
        return target;
    }

    /** Writes non-zero data through the device until it is full or the pool is (an I/O error); bytes written. */
    private static long fill(Path device) {
        ByteBuffer chunk = ByteBuffer.allocateDirect(1 << 20);
        while (chunk.hasRemaining()) chunk.put((byte) 0x5a);
        long written = 0;
        try (FileChannel f = FileChannel.open(device, StandardOpenOption.WRITE)) {
            while (true) {
                chunk.rewind();
                int n = f.write(chunk);
                if (n <= 0) break;
                written += n;
                if (written % (16 << 20) == 0) f.force(true);
            }
        } catch (IOException endOfDeviceOrPoolFull) {
            // ENOSPC at the end of the device, EIO when the loop device cannot grow its file
        }
        return written;
    }

    private static void writeFile(Path file, int bytes) throws IOException {
        try (FileChannel f = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            f.write(ByteBuffer.allocate(bytes).put(0, new byte[] {1}));
            f.force(true);
        }
    }

    private static void sh(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) throw new IOException(String.join(" ", command) + ": " + out);
    }
}
