package io.csi4j.driver.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** statfs, statx and errno text, checked against coreutils' stat and glibc's own names. */
class StatsTest {

    private static List<String> coreutilsStat(String format, Path path, boolean fs) {
        var args = fs ? List.of("-f", "-c", format, path.toString()) : List.of("-c", format, path.toString());
        return List.of(Tools.run(Duration.ofSeconds(10), "stat", args).stdout().strip().split(" "));
    }

    @ParameterizedTest
    @ValueSource(strings = {"ext4", "xfs", "btrfs"})
    void statfsMatchesCoreutils(String fsType) {
        ScratchFilesystem.require(fsType);
        try (ScratchFilesystem fs = ScratchFilesystem.create(fsType)) {
            FsStats stats = fs.stats();
            // %S fundamental block size, %b total blocks, %c total inodes, %T type name
            List<String> expected = coreutilsStat("%S %b %c %T", fs.mountPoint(), true);
            assertEquals(fsType, stats.type());
            assertEquals(fsType.equals("ext4") ? "ext2/ext3" : fsType, expected.get(3));
            assertEquals(Long.parseLong(expected.get(0)), stats.blockSize());
            assertEquals(Long.parseLong(expected.get(1)) * stats.blockSize(), stats.totalBytes());
            assertEquals(Long.parseLong(expected.get(2)), stats.totalInodes());
            assertTrue(stats.freeBytes() > 0 && stats.freeBytes() <= stats.totalBytes());
            assertTrue(stats.availableBytes() <= stats.freeBytes());
            assertTrue(stats.totalBytes() > ScratchFilesystem.DEFAULT_SIZE / 2);
            assertFalse(stats.readOnly());
        }
    }

    @Test
    void statfsOfTmpfsAndReadOnlyFlag(@TempDir Path dir) throws Exception {
        Privileged.requireRoot();
        Path target = Files.createDirectories(dir.resolve("t"));
        Mounts.mount("csi4j-stat", target, "tmpfs", Set.of(MountFlag.RDONLY), "size=8m");
        try {
            FsStats stats = FsStats.of(target);
            assertEquals("tmpfs", stats.type());
            assertEquals(0x01021994L, stats.typeMagic());
            assertEquals(8L << 20, stats.totalBytes());
            assertTrue(stats.readOnly());
        } finally {
            Mounts.unmount(target);
        }
    }

    @Test
    void statxMatchesCoreutils(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("f");
        Files.write(file, new byte[300_000]);
        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r-----"));
        FileStat stat = FileStat.of(file);
        // %s size, %b blocks, %B block unit, %i inode, %a octal mode
        List<String> expected = coreutilsStat("%s %b %B %i %a", file, false);
        assertEquals(Long.parseLong(expected.get(0)), stat.size());
        assertEquals(Long.parseLong(expected.get(1)) * Long.parseLong(expected.get(2)), stat.allocatedBytes());
        assertEquals(Long.parseLong(expected.get(3)), stat.inode());
        assertEquals(Integer.parseInt(expected.get(4), 8), stat.permissions());
        assertTrue(stat.isRegularFile());
        assertFalse(stat.isDirectory() || stat.isBlockDevice());
        assertTrue(FileStat.of(dir).isDirectory());
    }

    @Test
    void blockDeviceNumbers() {
        ScratchFilesystem.require("ext4");
        try (ScratchFilesystem fs = ScratchFilesystem.create("ext4")) {
            FileStat node = FileStat.of(fs.device().node());
            assertTrue(node.isBlockDevice());
            assertEquals(7, node.rdevMajor());
            assertEquals(fs.device().number(), node.rdevMinor());
            // a file on the filesystem lives on the loop device
            FileStat root = FileStat.of(fs.mountPoint());
            assertEquals(7, root.deviceMajor());
            assertEquals(fs.device().number(), root.deviceMinor());
        }
    }

    @Test
    void errnoNamesAndTextComeFromLibc(@TempDir Path dir) {
        assertEquals("EBUSY", Errno.name(Errno.EBUSY));
        assertEquals("ENOSPC", Errno.name(Errno.ENOSPC));
        assertEquals("EOPNOTSUPP", Errno.name(Errno.EOPNOTSUPP));
        assertEquals("Device or resource busy", Errno.describe(Errno.EBUSY));
        assertEquals("No space left on device", Errno.describe(Errno.ENOSPC));

        Path missing = dir.resolve("missing");
        OsException e = assertThrows(OsException.class, () -> FileStat.of(missing));
        assertEquals(Errno.ENOENT, e.errno());
        assertEquals("statx(" + missing + "): ENOENT (No such file or directory)", e.getMessage());
        OsException notDir = assertThrows(OsException.class, () -> FsStats.of(missing.resolve("x")));
        assertTrue(notDir.is(Errno.ENOENT));
    }
}
