package io.csi4j.cli.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.os.FileStat;
import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.ListVolumesRequest;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 13: {@code csi4j serve} with no pool flag serves from reflink-capable storage. The temporary directory is
 * on the root filesystem (ext4 on this machine kind, as a fresh machine's /var/lib), which cannot reflink: the
 * plugin makes a thin XFS pool image once, adopts it on restart, keeps an earlier directory pool visible, and
 * refuses a pool image the kernel cannot mount rather than fall back to copies.
 */
class ServeDefaultPoolTest {
    private static final long GIB = 1L << 30;

    private static void requireExt4(Path dir) {
        String fs = FsStats.of(dir).type();
        Privileged.require(fs.equals("ext4"),
                "the temporary directory must be on ext4 (no reflink) for this test, it is on " + fs);
    }

    @Test
    void noFlagOnExt4MakesAThinXfsPoolAndARestartAdoptsIt(@TempDir Path tmp) throws Exception {
        Leaks.requireRoot();
        Path data = Files.createDirectories(tmp.resolve("data"));
        requireExt4(data);
        long free = FsStats.of(data).availableBytes();
        long reserve = FsStats.of(data).totalBytes() / 10;   // --pool-reserve 10%, the default
        try {
            String volume;
            try (Plugin plugin = Plugin.start(data, "--pool-size", "auto")) {
                System.out.println("default pool: " + plugin.startupLine);
                assertTrue(plugin.startupLine.contains("reflink=yes"), plugin.startupLine);
                assertTrue(plugin.startupLine.contains("thin XFS pool image"), plugin.startupLine);
                Path image = data.resolve("pool.img");
                FileStat stat = FileStat.of(image);
                assertEquals(0, stat.size() % GIB, "whole GiB");
                assertTrue(Math.abs(free - reserve - stat.size()) < 4 * GIB,
                        "the free space (" + free + ") less the reserve (" + reserve + "), not " + stat.size());
                assertTrue(stat.allocatedBytes() < stat.size() / 20,
                        "thin: " + stat.allocatedBytes() + " of " + stat.size() + " bytes allocated");
                assertEquals("xfs", MountTable.read().at(data.toRealPath().resolve("pool")).orElseThrow().fsType());
                volume = new Rpc(plugin.channel(), null).controller().createVolume(CreateVolumeRequest.newBuilder().setName("kept")
                        .setCapacityRange(Rpc.atLeast(320L << 20)).addVolumeCapabilities(Rpc.mountXfs()).build())
                        .getVolume().getVolumeId();
            }
            try (Plugin again = Plugin.start(data, "--pool-size", "auto")) {
                assertTrue(again.startupLine.contains("reflink=yes") && again.startupLine.contains("adopting"), again.startupLine);
                var listed = new Rpc(again.channel(), null).controller().listVolumes(ListVolumesRequest.getDefaultInstance());
                assertEquals(volume, listed.getEntries(0).getVolume().getVolumeId(), "the volume made before the restart");
            }
            // --pool-size 0 beside a pool image would serve the directory beneath it: refused
            var refused = Plugin.run("serve", "--data-dir", data.toString(), "--node-id", "node-1", "--pool-size", "0");
            assertNotEquals(0, refused.exit());
            assertTrue(refused.stderr().contains("pool.img"), refused.stderr());
        } finally {
            Leaks.cleanUp(tmp);
        }
    }

    @Test
    void anEarlierDirectoryPoolIsKeptVisible(@TempDir Path tmp) throws Exception {
        Leaks.requireRoot();
        Path data = Files.createDirectories(tmp.resolve("data"));
        requireExt4(data);
        try {
            String volume;
            try (Plugin plugin = Plugin.start(data, "--pool-size", "0")) {
                assertTrue(plugin.startupLine.contains("reflink=no"), plugin.startupLine);
                volume = new Rpc(plugin.channel(), null).controller().createVolume(CreateVolumeRequest.newBuilder().setName("old")
                        .setCapacityRange(Rpc.atLeast(64L << 20)).addVolumeCapabilities(Rpc.mountXfs()).build())
                        .getVolume().getVolumeId();
            }
            try (Plugin plugin = Plugin.start(data, "--pool-size", "auto")) {
                assertTrue(plugin.startupLine.contains("reflink=no") && plugin.startupLine.contains("kept"), plugin.startupLine);
                assertTrue(Files.notExists(data.resolve("pool.img")), "no pool image made over the volumes");
                var listed = new Rpc(plugin.channel(), null).controller().listVolumes(ListVolumesRequest.getDefaultInstance());
                assertEquals(volume, listed.getEntries(0).getVolume().getVolumeId());
            }
        } finally {
            Leaks.cleanUp(tmp);
        }
    }

    @Test
    void aPoolImageTheKernelCannotMountIsRefusedNotReplacedByCopies(@TempDir Path tmp) throws Exception {
        Leaks.requireRoot();
        Path data = Files.createDirectories(tmp.resolve("data"));
        requireExt4(data);
        try {
            try (RandomAccessFile garbage = new RandomAccessFile(data.resolve("pool.img").toFile(), "rw")) {
                garbage.setLength(512L << 20);
                garbage.write("not a filesystem".getBytes());
            }
            var run = Plugin.run("serve", "--data-dir", data.toString(), "--node-id", "node-1", "--pool-size", "auto");
            System.out.println("unmountable pool: exit " + run.exit() + ": " + run.stderr().strip());
            assertEquals(1, run.exit(), run.stderr());
            assertTrue(run.stderr().contains("cannot mount the pool image"), run.stderr());
            assertTrue(run.stdout().isBlank(), "nothing served: " + run.stdout());
            assertTrue(MountTable.read().at(data.toRealPath().resolve("pool")).isEmpty(), "nothing mounted");
            assertTrue(Leaks.loopsUnder(tmp).isEmpty(), "no loop device left: " + Leaks.loopsUnder(tmp));
        } finally {
            Leaks.cleanUp(tmp);
        }
    }
}
