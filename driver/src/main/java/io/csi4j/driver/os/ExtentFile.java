package io.csi4j.driver.os;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A file opened read-only to learn where its data lives, without reading it: lseek(SEEK_DATA/SEEK_HOLE) for
 * the logical data ranges, ioctl(FS_IOC_FIEMAP) for the physical extents behind them (two reflinked files
 * share an extent exactly where both map a range to the same physical address). The descriptor keeps the
 * inode alive, so a file deleted meanwhile still answers until {@link #close}.
 */
public final class ExtentFile implements AutoCloseable {
    private static final int SEEK_DATA = 3;
    private static final int SEEK_HOLE = 4;

    private static final long FS_IOC_FIEMAP = 0xC020660BL;   // _IOWR('f', 11, struct fiemap)
    private static final int FIEMAP_FLAG_SYNC = 0x1;           // write dirty pages first: no delayed allocation
    private static final long HEADER = 32;                     // struct fiemap
    private static final long EXTENT = 56;                     // struct fiemap_extent
    private static final int COUNT_PAGE = 512;                 // extents asked at a time by count()

    /** Extent flags: the last one, and those whose physical address cannot be compared or read as data. */
    public static final int EXTENT_LAST = 0x1;
    public static final int EXTENT_UNKNOWN = 0x2;
    public static final int EXTENT_DELALLOC = 0x4;
    public static final int EXTENT_ENCODED = 0x8;
    public static final int EXTENT_NOT_ALIGNED = 0x100;
    public static final int EXTENT_DATA_INLINE = 0x200;
    public static final int EXTENT_UNWRITTEN = 0x800;
    public static final int EXTENT_SHARED = 0x2000;

    private final Fd fd;
    private final long size;

    private ExtentFile(Fd fd, long size) {
        this.fd = fd;
        this.size = size;
    }

    public static ExtentFile open(Path file) {
        Fd fd = Fd.open(file, Libc.O_RDONLY);
        try {
            return new ExtentFile(fd, FileStat.of(fd).size());
        } catch (RuntimeException e) {
            fd.close();
            throw e;
        }
    }

    public Path path() { return fd.path(); }

    /** The apparent size, when opened. */
    public long size() { return size; }

    /** A logical data range: {@code [offset, offset + length)}. */
    public record Range(long offset, long length) {
        public long end() { return offset + length; }
    }

    /** One physical extent; {@code physical} is comparable between files of one filesystem. */
    public record Extent(long logical, long physical, long length, int flags) {
        public long end() { return logical + length; }

        /** Reads as zeros (preallocated, never written). */
        public boolean unwritten() { return (flags & EXTENT_UNWRITTEN) != 0; }

        /** Its physical address says nothing reliable about sharing. */
        public boolean opaque() {
            return (flags & (EXTENT_UNKNOWN | EXTENT_DELALLOC | EXTENT_ENCODED | EXTENT_NOT_ALIGNED | EXTENT_DATA_INLINE)) != 0;
        }

        public boolean last() { return (flags & EXTENT_LAST) != 0; }

        /** Shared with another file (a reflink): a write into it allocates anew. */
        public boolean shared() { return (flags & EXTENT_SHARED) != 0; }
    }

    /** The first data range at or after {@code from}, clipped to the size; null when only a hole is left. */
    public Range nextData(long from) {
        if (from >= size) return null;
        long start;
        try {
            start = Libc.lseek(fd.fd(), from, SEEK_DATA, fd.path());
        } catch (OsException e) {
            if (e.is(Errno.ENXIO)) return null;
            throw e;
        }
        if (start >= size) return null;
        long end = Math.min(Libc.lseek(fd.fd(), start, SEEK_HOLE, fd.path()), size);
        return new Range(start, end - start);
    }

    /**
     * Up to {@code max} extents overlapping {@code [from, size)}, in logical order; empty when none is left.
     * The first may begin before {@code from}.
     */
    public List<Extent> extents(long from, int max) {
        if (from >= size) return List.of();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment map = arena.allocate(HEADER + EXTENT * max, 8);
            map.set(JAVA_LONG, 0, from);                 // fm_start
            map.set(JAVA_LONG, 8, size - from);          // fm_length
            map.set(JAVA_INT, 16, FIEMAP_FLAG_SYNC);     // fm_flags
            map.set(JAVA_INT, 24, max);                  // fm_extent_count
            fd.ioctl(FS_IOC_FIEMAP, map, "ioctl(FS_IOC_FIEMAP)");
            int mapped = map.get(JAVA_INT, 20);
            List<Extent> extents = new ArrayList<>(mapped);
            for (int i = 0; i < mapped; i++) {
                long at = HEADER + EXTENT * i;
                extents.add(new Extent(map.get(JAVA_LONG, at), map.get(JAVA_LONG, at + 8), map.get(JAVA_LONG, at + 16),
                        map.get(JAVA_INT, at + 40)));
            }
            return extents;
        }
    }

    /** How many extents the file has (its fragmentation), asked {@value #COUNT_PAGE} at a time. */
    public int count() {
        int n = 0;
        for (long at = 0; ; ) {
            var page = extents(at, COUNT_PAGE);
            if (page.isEmpty()) return n;
            n += page.size();
            if (page.getLast().last() || page.size() < COUNT_PAGE) return n;
            at = page.getLast().end();
        }
    }

    /** Whether FIEMAP works on this file's filesystem (tmpfs, for one, has none). */
    public boolean mapsExtents() {
        try {
            extents(0, 1);
            return true;
        } catch (OsException e) {
            if (e.is(Errno.EOPNOTSUPP) || e.is(Errno.ENOTTY) || e.is(Errno.EINVAL)) return false;
            throw e;
        }
    }

    /** Reads up to {@code length} bytes at {@code offset} into {@code buffer}; 0 at the end of the file. */
    public long read(MemorySegment buffer, long length, long offset) {
        return Libc.pread(fd.fd(), buffer, length, offset, fd.path());
    }

    /** The block size of the file's filesystem: the granularity of its extents. */
    public long blockSize() {
        return FsStats.of(fd.path()).blockSize();
    }

    @Override
    public void close() {
        fd.close();
    }
}
