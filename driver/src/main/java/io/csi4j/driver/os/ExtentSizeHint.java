package io.csi4j.driver.os;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * XFS extent size hints ({@code xfs_io -c "extsize 1m"}): the filesystem allocates a file's space in
 * aligned chunks of this size, so a sparse image written at random offsets gets few large extents instead
 * of one per 4 KiB write. Through FS_IOC_FSGETXATTR / FS_IOC_FSSETXATTR; only an empty file (no extents
 * yet) may get one, so it is set right after the image is made.
 */
public final class ExtentSizeHint {
    private ExtentSizeHint() {}

    private static final long FS_IOC_FSGETXATTR = 0x801C581FL; // _IOR('X', 31, struct fsxattr)
    private static final long FS_IOC_FSSETXATTR = 0x401C5820L; // _IOW('X', 32, struct fsxattr)
    private static final int FS_XFLAG_EXTSIZE = 0x800;
    // struct fsxattr { u32 xflags; u32 extsize; u32 nextents; u32 projid; u32 cowextsize; u8 pad[8]; }
    private static final int SIZE = 28, XFLAGS = 0, EXTSIZE = 4;

    /**
     * Sets the hint on {@code file} and returns true; returns false when its filesystem has no extent
     * size hints (btrfs, tmpfs answer EOPNOTSUPP or ENOTTY; ext4 takes the call and ignores it). {@code bytes} must be a multiple of the
     * filesystem block size (XFS refuses others with EINVAL, as it refuses a file with extents already).
     */
    public static boolean set(Path file, long bytes) {
        if (bytes <= 0 || bytes > Integer.MAX_VALUE) throw new IllegalArgumentException("extent size hint " + bytes);
        try (Fd fd = Fd.open(file, Libc.O_RDONLY); Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(SIZE, 4);
            try {
                fd.ioctl(FS_IOC_FSGETXATTR, attr, "ioctl(FS_IOC_FSGETXATTR)");
            } catch (OsException e) {
                if (e.is(Errno.EOPNOTSUPP) || e.is(Errno.ENOTTY)) return false;
                throw e;
            }
            attr.set(JAVA_INT, XFLAGS, attr.get(JAVA_INT, XFLAGS) | FS_XFLAG_EXTSIZE);
            attr.set(JAVA_INT, EXTSIZE, (int) bytes);
            try {
                fd.ioctl(FS_IOC_FSSETXATTR, attr, "ioctl(FS_IOC_FSSETXATTR)");
            } catch (OsException e) {
                if (e.is(Errno.EOPNOTSUPP) || e.is(Errno.ENOTTY)) return false;
                throw e;
            }
        }
        return of(file) == bytes; // ext4 accepts the call and keeps no hint: read it back
    }

    /** The file's extent size hint in bytes, 0 when it has none (or its filesystem has no hints). */
    public static long of(Path file) {
        try (Fd fd = Fd.open(file, Libc.O_RDONLY); Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(SIZE, 4);
            try {
                fd.ioctl(FS_IOC_FSGETXATTR, attr, "ioctl(FS_IOC_FSGETXATTR)");
            } catch (OsException e) {
                if (e.is(Errno.EOPNOTSUPP) || e.is(Errno.ENOTTY)) return 0;
                throw e;
            }
            return (attr.get(JAVA_INT, XFLAGS) & FS_XFLAG_EXTSIZE) == 0 ? 0 : Integer.toUnsignedLong(attr.get(JAVA_INT, EXTSIZE));
        }
    }
}
