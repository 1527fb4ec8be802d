package io.csi4j.driver.os;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Makes a file thick: every byte allocated, written, and its own. Plain fallocate, and FALLOC_FL_ZERO_RANGE on XFS,
 * leave unwritten extents, whose first write still needs an extent conversion in the filesystem's journal (measured:
 * {@code xfs_bmap} flag 010000 after either; FALLOC_FL_WRITE_ZEROES is EOPNOTSUPP on XFS in 6.18). So the fill is:
 * unshare reflinked extents (FALLOC_FL_UNSHARE_RANGE), fallocate the holes (one contiguous request, so ENOSPC
 * comes before anything is written), then write zeros, with O_DIRECT in large chunks, over exactly the ranges that
 * read as zeros already (holes, unwritten extents): data is never touched, and a repeat writes nothing.
 *
 * <p>Nobody may write into those ranges meanwhile (a write that lands between the map and our zeros would be
 * overwritten): callers fill an image no loop device exposes, or only a part that none does yet.
 */
public final class ZeroFill {
    private ZeroFill() {}

    private static final int FALLOC_FL_KEEP_SIZE = 0x01;
    private static final int FALLOC_FL_UNSHARE_RANGE = 0x40;
    private static final long CHUNK = 8L << 20;
    private static final int MAX_EXTENTS = 512;
    /** Written and fsynced after a fill of a fresh image: "all zeros, format me" (its allocation says nothing then). */
    public static final String FRESH_MARK = "user.csi4j.zeroed";
    /** Written by every fill: the file is to stay thick (ReclaimSpace gives nothing back from it). */
    public static final String THICK_MARK = "user.csi4j.thick";

    /** Where a file is not thick, in bytes of its size. */
    public record Layout(long size, long holeBytes, long unwrittenBytes, long sharedBytes) {
        public boolean thick() {
            return holeBytes == 0 && unwrittenBytes == 0 && sharedBytes == 0;
        }
    }

    /** Fills {@code [from, size)} of {@code file} (see the class comment) and fsyncs it; returns the bytes of zeros written. */
    public static long fill(Path file, long from) {
        long size = FileStat.of(file).size();
        if (from >= size) return 0;
        try (Fd fd = Fd.open(file, Libc.O_RDWR)) {
            try {
                Libc.fallocate(fd.fd(), FALLOC_FL_UNSHARE_RANGE | FALLOC_FL_KEEP_SIZE, from, size - from, file);
            } catch (OsException e) {
                // ext4, tmpfs: no reflinks, nothing shared
                if (!e.is(Errno.EOPNOTSUPP) && !e.is(Errno.EINVAL)) throw e;
            }
            Libc.fallocate(fd.fd(), FALLOC_FL_KEEP_SIZE, from, size - from, file);
            List<ExtentFile.Range> zeros = readingAsZeros(file, from);
            long written = writeZeros(file, zeros);
            FileMarks.set(file, THICK_MARK);   // its fsync is the file's: the zeros and the mark
            return written;
        }
    }

    /** Holes, unwritten and shared bytes of the file, from FIEMAP. */
    public static Layout layout(Path file) {
        try (ExtentFile f = ExtentFile.open(file)) {
            long size = f.size();
            long mapped = 0;
            long unwritten = 0;
            long shared = 0;
            long at = 0;
            while (at < size) {
                List<ExtentFile.Extent> extents = f.extents(at, MAX_EXTENTS);
                if (extents.isEmpty()) break;
                for (ExtentFile.Extent x : extents) {
                    long start = Math.max(x.logical(), at);
                    long end = Math.min(x.end(), size);
                    if (end <= start) continue;
                    mapped += end - start;
                    if (x.unwritten()) unwritten += end - start;
                    if (x.shared()) shared += end - start;
                    at = end;
                }
                if (extents.getLast().last()) break;
            }
            return new Layout(size, size - mapped, unwritten, shared);
        }
    }

    /** Marks a freshly filled image (all zeros) durably; {@link #fresh} reads it, {@link #unmark} drops it. */
    public static void mark(Path file) {
        FileMarks.set(file, FRESH_MARK);
    }

    public static boolean fresh(Path file) {
        return FileMarks.has(file, FRESH_MARK);
    }

    /** Whether the file was made thick by {@link #fill} (and is to stay so). */
    public static boolean thick(Path file) {
        return FileMarks.has(file, THICK_MARK);
    }

    /** Drops the mark, durably, before anything but zeros may be written into the file. */
    public static void unmark(Path file) {
        FileMarks.clear(file, FRESH_MARK);
    }

    /** The ranges at or after {@code from} that read as zeros without being written: holes and unwritten extents. */
    private static List<ExtentFile.Range> readingAsZeros(Path file, long from) {
        List<ExtentFile.Range> ranges = new ArrayList<>();
        try (ExtentFile f = ExtentFile.open(file)) {
            long size = f.size();
            long at = from;
            while (at < size) {
                List<ExtentFile.Extent> extents = f.extents(at, MAX_EXTENTS);
                if (extents.isEmpty()) break;
                for (ExtentFile.Extent x : extents) {
                    long start = Math.max(x.logical(), at);
                    long end = Math.min(x.end(), size);
                    if (end <= start) continue;
                    if (start > at) add(ranges, at, start);          // a hole before the extent
                    if (x.unwritten()) add(ranges, start, end);
                    at = end;
                }
                if (extents.getLast().last()) break;
            }
            if (at < size) add(ranges, at, size);                     // a hole at the end
        }
        return ranges;
    }

    private static void add(List<ExtentFile.Range> ranges, long start, long end) {
        if (!ranges.isEmpty() && ranges.getLast().end() == start) {
            ExtentFile.Range last = ranges.removeLast();
            ranges.add(new ExtentFile.Range(last.offset(), end - last.offset()));
        } else {
            ranges.add(new ExtentFile.Range(start, end - start));
        }
    }

    /** O_DIRECT where the filesystem has it (no page cache to flush, no second copy), else buffered. */
    private static long writeZeros(Path file, List<ExtentFile.Range> ranges) {
        if (ranges.isEmpty()) return 0;
        boolean aligned = ranges.stream().allMatch(r -> r.offset() % 4096 == 0 && r.length() % 4096 == 0);
        Fd fd = null;
        if (aligned) {
            try {
                fd = Fd.open(file, Libc.O_WRONLY | Libc.O_DIRECT);
            } catch (OsException e) {
                if (!e.is(Errno.EINVAL)) throw e;
            }
        }
        if (fd == null) fd = Fd.open(file, Libc.O_WRONLY);
        long written = 0;
        try (Fd out = fd; Arena arena = Arena.ofConfined()) {
            MemorySegment zeros = arena.allocate(CHUNK, 4096);      // zeroed by the arena
            for (ExtentFile.Range r : ranges) {
                long at = r.offset();
                while (at < r.end()) {
                    long n = Libc.pwrite(out.fd(), zeros, Math.min(CHUNK, r.end() - at), at, file);
                    at += n;
                    written += n;
                }
            }
        }
        return written;
    }
}
