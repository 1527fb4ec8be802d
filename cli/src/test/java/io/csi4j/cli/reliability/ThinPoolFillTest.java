package io.csi4j.cli.reliability;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.storage.ByteUnits;
import io.csi4j.proto.csi.*;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 25, thin pools must not lie. {@code csi4j serve --pool-size auto} on a small ext4 data directory makes a thin
 * XFS pool image there; a volume of it is written (records, each fsynced) while another writer fills the ext4 beneath.
 * The workload gets a clear error, the pool reports every volume abnormal and {@code csi4j_pool_overcommitted 1} while
 * the disk is full, refuses new volumes (RESOURCE_EXHAUSTED in human units), and once space returns: every record
 * whose fsync succeeded is intact, the volume's filesystem checks clean, and the plugin is healthy and creates again.
 */
class ThinPoolFillTest {
    private static final long MIB = 1L << 20;
    /** Each record: sequence number, payload derived from it, CRC32C of both; one fsync per record. */
    private static final int RECORD = 64 << 10;
    private static final int RECORDS_BEFORE_FILL = 200;
    private static final int MAX_RECORDS = 6000;             // 375 MiB: the 512 MiB volume never fills by itself

    @Test
    void backingFilesystemFilledByAnotherWriterWhileAVolumeIsWritten(@TempDir Path tmp) throws Exception {
        Leaks.requireRoot();
        Path backingImage = tmp.resolve("backing.img");
        Path backing = Files.createDirectories(tmp.resolve("backing"));
        try (RandomAccessFile f = new RandomAccessFile(backingImage.toFile(), "rw")) {
            f.setLength(1600 * MIB);
        }
        // -m 0: the kernel's loop writes and the filler (both root) see the same free space as statfs's f_bavail
        sh("mkfs.ext4", "-q", "-F", "-m", "0", backingImage.toString());
        sh("mount", "-o", "loop", backingImage.toString(), backing.toString());
        Path data = backing.resolve("data");
        Path node = Files.createDirectories(tmp.resolve("kubelet"));
        int metricsPort = freePort();
        try (Plugin plugin = Plugin.start(data, "--pool-size", "auto", "--metrics-address", "127.0.0.1:" + metricsPort)) {
            System.out.println("thin pool: " + plugin.startupLine);
            var rpc = new Rpc(plugin.channel(), null);
            long reserve = FsStats.of(backing).totalBytes() / 10;
            long image = Files.size(data.resolve("pool.img"));
            assertEquals(1L << 30, image, "auto: the free space less the 10% reserve, in whole GiB");
            assertTrue(plugin.startupLine.contains("reserve"), plugin.startupLine);
            assertEquals(0, metric(metricsPort, "csi4j_pool_overcommitted"));
            assertEquals(reserve, metric(metricsPort, "csi4j_pool_backing_reserve_bytes"));

            String a = create(rpc, "fill-a", 512 * MIB);
            String b = create(rpc, "fill-b", 64 * MIB);            // never staged: only the pool speaks for it
            Path staging = Files.createDirectories(node.resolve("a/staging"));
            Path target = node.resolve("a/target");
            stage(rpc, a, staging, target);
            assertFalse(condition(rpc, a).getAbnormal(), condition(rpc, a).getMessage());
            assertTrue(plugin.stderr().contains("keeping " + ByteUnits.human(reserve) + " free there (--pool-reserve 10%)"), plugin.stderr());

            // new volumes are refused before the pool can lie: the disk beneath filled into the reserve, not beyond
            long capacityBefore = capacity(rpc);
            long claimable = metric(metricsPort, "csi4j_pool_claimable_bytes");
            long prefill = FsStats.of(backing).availableBytes() - claimable - reserve / 2;
            fill(backing.resolve("filler"), prefill);
            long capacityInReserve = capacity(rpc);
            System.out.printf("thin pool: capacity %d MiB, %d MiB once the disk beneath had the claimable %d MiB + half the reserve free%n",
                    capacityBefore / MIB, capacityInReserve / MIB, claimable / MIB);
            assertEquals(0, metric(metricsPort, "csi4j_pool_overcommitted"), "not yet: the image can still claim all it may");
            assertFalse(condition(rpc, b).getAbnormal(), condition(rpc, b).getMessage());
            assertTrue(capacityInReserve < capacityBefore - reserve / 4, capacityInReserve + " of " + capacityBefore);
            var early = assertThrows(StatusRuntimeException.class, () -> create(rpc, "fill-c", capacityInReserve + MIB));
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, early.getStatus().getCode());
            assertTrue(early.getStatus().getDescription().contains("is kept free"), early.getStatus().getDescription());

            // the workload: records fsynced one by one; acked counts those whose fsync returned
            AtomicLong acked = new AtomicLong();
            AtomicReference<IOException> workloadError = new AtomicReference<>();
            Path log = target.resolve("records.log");
            Thread workload = Thread.ofPlatform().name("thin-pool-workload").start(() -> writeRecords(log, acked, workloadError));
            for (int i = 0; i < 600 && acked.get() < RECORDS_BEFORE_FILL && workload.isAlive(); i++) Thread.sleep(100);
            long beforeFill = acked.get();
            assertTrue(beforeFill >= RECORDS_BEFORE_FILL, "the workload wrote " + beforeFill + " records before the fill: " + workloadError.get());

            // another writer fills the filesystem beneath the pool image
            long filled = fill(backing.resolve("filler"), Long.MAX_VALUE);
            System.out.printf("thin pool: %d records fsynced before the fill, then %d MiB written beside the pool until ENOSPC%n",
                    beforeFill, filled / MIB);
            workload.join(120_000);
            assertFalse(workload.isAlive(), "the workload neither failed nor finished within 120 s of the disk being full");
            IOException error = workloadError.get();
            assertNotNull(error, "the workload wrote " + acked.get() + " records on a full disk without an error");
            System.out.printf("thin pool: the workload got '%s' after %d records fsynced%n", error.getMessage(), acked.get());
            assertTrue(clear(error), "a clear error (EIO, ENOSPC or a read-only filesystem), not: " + error);

            // during the fill: the condition, the metric, and no new volume
            long overcommitted = metric(metricsPort, "csi4j_pool_overcommitted");
            long backingFree = metric(metricsPort, "csi4j_pool_backing_free_bytes");
            VolumeCondition poolSpeaks = condition(rpc, b);
            System.out.println("thin pool: during the fill: overcommitted=" + overcommitted + " backing_free=" + backingFree
                    + "; condition of an idle volume: " + poolSpeaks.getMessage());
            assertEquals(1, overcommitted);
            assertTrue(backingFree < 8 * MIB, "backing free " + backingFree);
            assertTrue(poolSpeaks.getAbnormal() && poolSpeaks.getMessage().contains("free space on " + data.toRealPath()),
                    poolSpeaks.getMessage());
            VolumeCondition written = condition(rpc, a);
            assertTrue(written.getAbnormal(), written.getMessage());
            var stats = rpc.node().nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(a)
                    .setVolumePath(target.toString()).build());
            assertTrue(stats.getVolumeCondition().getAbnormal(), stats.getVolumeCondition().getMessage());
            var refused = assertThrows(StatusRuntimeException.class, () -> create(rpc, "fill-c", 64 * MIB));
            System.out.println("thin pool: CreateVolume during the fill: " + refused.getStatus());
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, refused.getStatus().getCode());
            assertTrue(refused.getStatus().getDescription().contains("64 MiB asked"), refused.getStatus().getDescription());
            assertEquals(0, capacity(rpc), "GetCapacity while the disk beneath is full");
            assertTrue(plugin.alive());

            // space returns: healthy again
            Files.delete(backing.resolve("filler"));
            sh("sync", "-f", backing.toString());
            assertEquals(0, metric(metricsPort, "csi4j_pool_overcommitted"));
            assertFalse(condition(rpc, b).getAbnormal(), condition(rpc, b).getMessage());
            unstage(rpc, a, staging, target);
            stage(rpc, a, staging, target);                         // mounted again: the journal replays
            long intact = verifyRecords(log, acked.get());
            System.out.printf("thin pool: %d of %d acknowledged records intact after space returned%n", intact, acked.get());
            assertFalse(condition(rpc, a).getAbnormal(), condition(rpc, a).getMessage());
            unstage(rpc, a, staging, target);
            Path volumeImage = data.toRealPath().resolve("pool/volumes/" + a + ".img");
            String fsck = sh("e2fsck", "-f", "-n", volumeImage.toString());
            System.out.println("thin pool: e2fsck -f -n of the volume: " + fsck.strip().replace('\n', ' '));
            String c = create(rpc, "fill-c", 64 * MIB);
            assertNotNull(c);
            assertTrue(capacity(rpc) > 0);
            for (String id : new String[] {a, b, c}) rpc.controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
            assertEquals(0, plugin.stop(30_000));
        } finally {
            Files.deleteIfExists(backing.resolve("filler"));
            Leaks.cleanUp(tmp);      // volumes' mounts and loops, then the pool
            Leaks.cleanUp(tmp);      // the backing filesystem, busy while the pool was mounted on it
        }
        assertEquals(java.util.List.of(), Leaks.mountsUnder(tmp, null), "mounts left");
        assertEquals(java.util.List.of(), Leaks.loopsUnder(tmp), "loop devices left");
    }

    /** Appends records, one fdatasync each, until an error or {@link #MAX_RECORDS}. */
    private static void writeRecords(Path log, AtomicLong acked, AtomicReference<IOException> error) {
        ByteBuffer record = ByteBuffer.allocateDirect(RECORD);
        long deadline = System.nanoTime() + 300_000_000_000L;
        try (FileChannel f = FileChannel.open(log, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (long seq = 0; seq < MAX_RECORDS && System.nanoTime() < deadline; seq++) {
                fillRecord(record, seq);
                while (record.hasRemaining()) f.write(record);
                f.force(false);
                acked.set(seq + 1);
            }
        } catch (IOException e) {
            error.set(e);
        }
    }

    private static void fillRecord(ByteBuffer record, long seq) {
        record.clear();
        record.putLong(seq);
        for (int i = 8; i < RECORD - 4; i += 8) record.putLong(seq * 0x9E3779B97F4A7C15L + i);
        CRC32C crc = new CRC32C();
        crc.update(record.duplicate().flip());
        record.putInt(RECORD - 4, (int) crc.getValue());
        record.position(0).limit(RECORD);
    }

    /** Every acknowledged record, in order, with its sequence number and checksum; returns how many were checked. */
    private static long verifyRecords(Path log, long acked) throws IOException {
        ByteBuffer expected = ByteBuffer.allocateDirect(RECORD);
        ByteBuffer actual = ByteBuffer.allocateDirect(RECORD);
        try (FileChannel f = FileChannel.open(log, StandardOpenOption.READ)) {
            assertTrue(f.size() >= acked * RECORD, "the log holds " + f.size() + " bytes, " + acked + " records were acknowledged");
            for (long seq = 0; seq < acked; seq++) {
                fillRecord(expected, seq);
                actual.clear();
                while (actual.hasRemaining() && f.read(actual, seq * RECORD + actual.position()) > 0) { /* read the record */ }
                actual.flip();
                assertEquals(expected, actual, "acknowledged record " + seq + " of " + acked);
            }
        }
        return acked;
    }

    /**
     * Appends to the filler beside the pool: {@code limit} bytes, or (Long.MAX_VALUE) until ENOSPC, bounded by the
     * filesystem's size either way; bytes written.
     */
    private static long fill(Path filler, long limit) throws IOException {
        ByteBuffer chunk = ByteBuffer.allocateDirect(4 << 20);
        while (chunk.hasRemaining()) chunk.put((byte) 0x5a);
        long written = 0;
        try (FileChannel f = FileChannel.open(filler, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
            try {
                for (int i = 0; i < 1000 && written < limit; i++) {
                    chunk.clear().limit((int) Math.min(chunk.capacity(), limit - written));
                    while (chunk.hasRemaining()) written += f.write(chunk);
                }
                if (limit == Long.MAX_VALUE) fail("a 1600 MiB filesystem took 4000 MiB");
            } catch (IOException full) {
                assertTrue(full.getMessage().contains("No space left"), full.toString());
                assertEquals(Long.MAX_VALUE, limit, "ENOSPC before the " + limit + " bytes asked: " + full);
            }
            try {
                f.force(true);
            } catch (IOException ignored) {
                // the blocks are taken either way: delayed allocation reserved them at write()
            }
        }
        return written;
    }

    private static boolean clear(IOException e) {
        String m = String.valueOf(e.getMessage());
        return m.contains("Input/output error") || m.contains("No space left") || m.contains("Read-only file system");
    }

    private static VolumeCapability mount() {
        return VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.getDefaultInstance())
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
    }

    private static String create(Rpc rpc, String name, long bytes) {
        return rpc.controller().createVolume(CreateVolumeRequest.newBuilder().setName(name).setCapacityRange(Rpc.atLeast(bytes))
                .addVolumeCapabilities(mount()).build()).getVolume().getVolumeId();
    }

    private static void stage(Rpc rpc, String id, Path staging, Path target) {
        rpc.node().nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setVolumeCapability(mount()).build());
        rpc.node().nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(mount()).build());
    }

    private static void unstage(Rpc rpc, String id, Path staging, Path target) {
        rpc.node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target.toString()).build());
        rpc.node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
    }

    private static VolumeCondition condition(Rpc rpc, String id) {
        return rpc.controller().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build())
                .getStatus().getVolumeCondition();
    }

    private static long capacity(Rpc rpc) {
        return rpc.controller().getCapacity(GetCapacityRequest.newBuilder().addVolumeCapabilities(mount()).build()).getAvailableCapacity();
    }

    /** One gauge of the plugin's metrics endpoint. */
    private static long metric(int port, String name) throws IOException, InterruptedException {
        try (HttpClient http = HttpClient.newHttpClient()) {
            String text = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            return text.lines().filter(l -> l.startsWith(name + " ")).map(l -> Long.parseLong(l.substring(name.length() + 1).strip()))
                    .findFirst().orElseThrow(() -> new AssertionError(name + " is not in the metrics"));
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static String sh(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        int exit = p.waitFor();
        if (exit != 0) throw new IOException(String.join(" ", command) + " exited " + exit + ": " + out);
        return out;
    }
}
