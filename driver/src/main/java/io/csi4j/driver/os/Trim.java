package io.csi4j.driver.os;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * ioctl(FITRIM) on a mounted filesystem: it discards every free block, what fstrim(8) does. On a loop
 * device the discards reach the backing image as punched holes, so the image gives its space back to the pool.
 */
public final class Trim {
    private Trim() {}

    private static final long FITRIM = 0xC0185879L;   // _IOWR('X', 121, struct fstrim_range)

    /** Trims the whole filesystem mounted at {@code mountPoint}; returns what the kernel says it trimmed. */
    public static long filesystem(Path mountPoint) {
        try (Fd fd = Fd.open(mountPoint, Libc.O_RDONLY); Arena arena = Arena.ofConfined()) {
            MemorySegment range = arena.allocate(24, 8);
            range.set(JAVA_LONG, 0, 0);      // start
            range.set(JAVA_LONG, 8, -1L);    // len: to the end (ULLONG_MAX)
            range.set(JAVA_LONG, 16, 0);     // minlen: every free extent
            fd.ioctl(FITRIM, range, "ioctl(FITRIM)");
            return range.get(JAVA_LONG, 8);
        }
    }
}
