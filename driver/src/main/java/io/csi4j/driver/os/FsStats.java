package io.csi4j.driver.os;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Map;

/**
 * statfs(2) of the filesystem holding a path. {@code type} is a name for the magic number
 * ("xfs", "btrfs", "ext4", "tmpfs" ...); ext2/3/4 share one magic and all read as "ext4".
 */
public record FsStats(long typeMagic, String type, long blockSize, long totalBytes, long freeBytes,
                      long availableBytes, long totalInodes, long freeInodes, boolean readOnly) {

    private static final long ST_RDONLY = 1;
    private static final Map<Long, String> TYPES = Map.ofEntries(
            Map.entry(0xEF53L, "ext4"),
            Map.entry(0x58465342L, "xfs"),
            Map.entry(0x9123683EL, "btrfs"),
            Map.entry(0x01021994L, "tmpfs"),
            Map.entry(0x858458F6L, "ramfs"),
            Map.entry(0x794C7630L, "overlay"),
            Map.entry(0xF2F52010L, "f2fs"),
            Map.entry(0x2FC12FC1L, "zfs"),
            Map.entry(0x6969L, "nfs"),
            Map.entry(0x65735546L, "fuse"),
            Map.entry(0x73717368L, "squashfs"),
            Map.entry(0x9FA0L, "proc"),
            Map.entry(0x62656572L, "sysfs"),
            Map.entry(0x63677270L, "cgroup2"),
            Map.entry(0x1373L, "devtmpfs"));

    /**
     * struct statfs on 64-bit Linux, 8 bytes per field: f_type 0, f_bsize 8, f_blocks 16, f_bfree 24,
     * f_bavail 32, f_files 40, f_ffree 48, f_fsid 56, f_namelen 64, f_frsize 72, f_flags 80, f_spare 88..120.
     */
    public static FsStats of(Path path) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(120, 8);
            Libc.statfs(path, buf);
            long magic = buf.get(JAVA_LONG, 0) & 0xFFFFFFFFL;
            // block counts are in f_frsize units (what statvfs reports); f_bsize where frsize is 0
            long frsize = buf.get(JAVA_LONG, 72);
            long blockSize = frsize != 0 ? frsize : buf.get(JAVA_LONG, 8);
            return new FsStats(magic, TYPES.getOrDefault(magic, "0x" + Long.toHexString(magic)), blockSize,
                    buf.get(JAVA_LONG, 16) * blockSize,
                    buf.get(JAVA_LONG, 24) * blockSize,
                    buf.get(JAVA_LONG, 32) * blockSize,
                    buf.get(JAVA_LONG, 40),
                    buf.get(JAVA_LONG, 48),
                    (buf.get(JAVA_LONG, 80) & ST_RDONLY) != 0);
        }
    }
}
