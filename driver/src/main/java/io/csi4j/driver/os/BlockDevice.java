package io.csi4j.driver.os;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/** Block device ioctls. */
public final class BlockDevice {
    private BlockDevice() {}

    private static final long BLKRASET = 0x1262L;       // _IO(0x12, 98)
    private static final long BLKRAGET = 0x1263L;       // _IO(0x12, 99)
    private static final long BLKGETSIZE64 = 0x80081272L; // _IOR(0x12, 114, size_t)
    private static final long BLKROSET = 0x125DL;       // _IO(0x12, 93), an int by pointer

    /** Size in bytes (BLKGETSIZE64). */
    public static long size(Path device) {
        return readLong(device, BLKGETSIZE64, "ioctl(BLKGETSIZE64)");
    }

    /** Read-ahead in 512-byte sectors (BLKRAGET). */
    public static long readAheadSectors(Path device) {
        return readLong(device, BLKRAGET, "ioctl(BLKRAGET)");
    }

    public static void setReadAheadSectors(Path device, long sectors) {
        if (sectors < 0) throw new IllegalArgumentException("negative read-ahead: " + sectors);
        try (Fd fd = Fd.open(device, Libc.O_RDONLY)) {
            fd.ioctl(BLKRASET, sectors, "ioctl(BLKRASET)");
        }
    }

    /**
     * BLKROSET on an open descriptor of the device: the block device's own read-only flag (not the filesystem's, not
     * the loop attachment's). Measured on 6.18: from then on write(2) through any descriptor, one open before
     * included, buffered or O_DIRECT, fails with EPERM (blkdev_write_iter); pages dirtied before are still written
     * back (the kernel only warns). The flag belongs to the device, not to what is attached to it: it outlives a loop
     * device's detach, so {@link LoopDevice} clears it at attach and after a detach.
     */
    static void setReadOnly(Fd fd, boolean readOnly) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment flag = arena.allocate(JAVA_INT);
            flag.set(JAVA_INT, 0, readOnly ? 1 : 0);
            fd.ioctl(BLKROSET, flag, "ioctl(BLKROSET)");
        }
    }

    private static long readLong(Path device, long request, String call) {
        try (Fd fd = Fd.open(device, Libc.O_RDONLY); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            fd.ioctl(request, out, call);
            return out.get(JAVA_LONG, 0);
        }
    }
}
