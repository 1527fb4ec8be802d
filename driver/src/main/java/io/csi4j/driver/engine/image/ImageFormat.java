package io.csi4j.driver.engine.image;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.storage.StorageException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What an image volume is, shared by the pool side ({@link ImageEngine}) and the node side ({@link LoopStaging}):
 * the filesystems it may hold and their smallest sizes, the granularity of its image, the loop device's default
 * read-ahead. Defined once here; the domain learns them from {@link PoolStorage#capabilities()}.
 */
final class ImageFormat {
    private ImageFormat() {}

    static final long MIB = 1L << 20;
    /** mkfs.xfs (xfsprogs >= 5.19) refuses filesystems under 300 MiB. */
    static final long XFS_MINIMUM = 300 * MIB;
    static final long EXT4_MINIMUM = 16 * MIB;
    /** The filesystems an image volume can hold, its default first: the one list. */
    static final String DEFAULT_FS = AccessType.DEFAULT_FS_TYPE;
    static final List<String> FILESYSTEMS = List.of(DEFAULT_FS, "xfs");
    /** What the kernel gives a loop device; a read-ahead of 0 from the caller means "back to this". */
    static final long DEFAULT_READ_AHEAD_KIB = 128;

    /** Rounds up to whole MiB and to the filesystem's minimum size. */
    static long roundUp(long bytes, AccessType access) {
        long minimum = switch (access) {
            case AccessType.Block b -> MIB;
            case AccessType.Mount m -> fsType(m.fsType()).equals("xfs") ? XFS_MINIMUM : EXT4_MINIMUM;
        };
        long rounded = Math.ceilDiv(Math.max(bytes, 1), MIB) * MIB;
        return Math.max(rounded, minimum);
    }

    /** "" means ext4; anything but ext4 or xfs is INVALID. */
    static String fsType(String requested) {
        String fs = requested == null || requested.isEmpty() ? DEFAULT_FS : requested;
        if (!FILESYSTEMS.contains(fs)) {
            throw StorageException.invalid("filesystem \"" + fs + "\" is not supported; supported: ext4 (default), xfs");
        }
        return fs;
    }

    /** An image's size is its length. */
    static long fileSize(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            throw new UncheckedIOException("size of " + file, e);
        }
    }
}
