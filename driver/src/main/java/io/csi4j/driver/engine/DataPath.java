package io.csi4j.driver.engine;

import io.csi4j.driver.os.AttachedLoop;
import io.csi4j.driver.os.ExtentSizeHint;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.LoopFlag;
import io.csi4j.driver.os.SparseFile;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;

/**
 * How volume data reaches the disk: the loop devices' options and how images are laid out. The defaults
 * are what scripts/bench-io measured best (docs/data-path.md has the numbers); the system properties
 * exist so that the bench can run the alternatives side by side, not as settings for users:
 * {@code csi4j.loop.directIo} (volume loops), {@code csi4j.pool.directIo} (the pool image's loop),
 * {@code csi4j.loop.blockSize} (volume loops' logical block size) and
 * {@code csi4j.image.extentSizeHint} (bytes, 0 = none).
 *
 * @param volumeDirectIo   volume loop devices read and write their image with O_DIRECT: no second copy
 *                         of every byte in the page cache (the volume's filesystem caches it once)
 * @param poolDirectIo     the same for the loop device of the pool's own image: no third copy
 * @param loopBlockSize    the loops' logical block size, 512 unless the bench says otherwise: the sector size
 *                         every filesystem and partition table in an image was made for. Never 0 (the
 *                         kernel's choice): with direct IO the kernel then takes the backing file's direct IO
 *                         alignment, 4 KiB for a reflinked image on XFS (every snapshot source, restore and
 *                         clone), under which a 1 KiB-block ext4 or a 512-byte-sector XFS no longer mounts.
 *                         Where the backing file cannot do direct IO at 512 bytes, the kernel falls back to
 *                         buffered IO for that loop (correct, only cached twice)
 * @param extentSizeHint   XFS extent size hint set on a new, empty image, so that random writes into a
 *                         thin image allocate aligned chunks instead of fragmenting it; 0 for none
 */
public record DataPath(boolean volumeDirectIo, boolean poolDirectIo, int loopBlockSize, long extentSizeHint) {

    /** The defaults, unless the bench's system properties say otherwise. */
    public static final DataPath CONFIGURED = new DataPath(
            flag("csi4j.loop.directIo", true),
            flag("csi4j.pool.directIo", true),
            Integer.getInteger("csi4j.loop.blockSize", 512),
            Long.getLong("csi4j.image.extentSizeHint", 0));

    private static boolean flag(String property, boolean otherwise) {
        String value = System.getProperty(property);
        return value == null ? otherwise : Boolean.parseBoolean(value);
    }

    /** Attaches the pool's image (autoclear: its mount holds it), at the 512-byte sectors its XFS was made with. */
    AttachedLoop attachPool(Path image) {
        Set<LoopFlag> flags = EnumSet.of(LoopFlag.AUTOCLEAR);
        if (poolDirectIo) flags.add(LoopFlag.DIRECT_IO);
        return LoopDevice.attach(image, flags, 512);
    }

    /** A new sparse image of {@code size} bytes, with the extent size hint where the pool has them (XFS). */
    public void createImage(Path image, long size) {
        SparseFile.create(image, size);
        if (extentSizeHint > 0) ExtentSizeHint.set(image, extentSizeHint);
    }
}
