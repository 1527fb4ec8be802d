package io.csi4j.driver.os;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * XFS_IOC_FSGROWFSDATA with the filesystem's current size: the kernel rewrites every secondary superblock from
 * the primary, which {@code xfs_growfs} skips when the size is unchanged ("data size unchanged, skipping"). A
 * grow cut short by a power cut leaves them stale (the primary grown through the log, the secondaries written
 * after it without a flush), and {@code xfs_repair} then shrinks the filesystem back to the size they say.
 */
public final class XfsGeometry {
    private XfsGeometry() {}

    private static final long FSGEOMETRY_V1 = 0x80705864L;   // _IOR('X', 100, struct xfs_fsop_geom_v1), 112 bytes
    private static final long FSGROWFSDATA = 0x4010586EL;    // _IOW('X', 110, struct xfs_growfs_data), 16 bytes
    private static final long IMAXPCT = 28, DATABLOCKS = 32;  // offsets in xfs_fsop_geom_v1

    /** Rewrites the secondary superblocks of the XFS mounted at {@code mountPoint} (not made durable: sync after). */
    public static void rewriteSecondarySuperblocks(Path mountPoint) {
        try (Fd fd = Fd.open(mountPoint, Libc.O_RDONLY); Arena arena = Arena.ofConfined()) {
            MemorySegment geometry = arena.allocate(112, 8);
            fd.ioctl(FSGEOMETRY_V1, geometry, "ioctl(XFS_IOC_FSGEOMETRY_V1)");
            MemorySegment grow = arena.allocate(16, 8);
            grow.set(JAVA_LONG, 0, geometry.get(JAVA_LONG, DATABLOCKS));
            grow.set(JAVA_INT, 8, geometry.get(JAVA_INT, IMAXPCT));
            fd.ioctl(FSGROWFSDATA, grow, "ioctl(XFS_IOC_FSGROWFSDATA)");
        }
    }
}
