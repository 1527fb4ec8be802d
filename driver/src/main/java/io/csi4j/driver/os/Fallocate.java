package io.csi4j.driver.os;

import java.nio.file.Path;

/** Space management of sparse files. */
public final class Fallocate {
    private Fallocate() {}

    private static final int FALLOC_FL_KEEP_SIZE = 0x01;
    private static final int FALLOC_FL_PUNCH_HOLE = 0x02;

    /** Deallocates a byte range (reads as zeros afterwards); the file size stays. */
    public static void punchHole(Path file, long offset, long length) {
        try (Fd fd = Fd.open(file, Libc.O_WRONLY)) {
            Libc.fallocate(fd.fd(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, length, file);
        }
    }

    /** Bytes the filesystem has allocated to the file (st_blocks * 512), not its apparent size. */
    public static long allocatedBytes(Path file) {
        return FileStat.of(file).allocatedBytes();
    }
}
