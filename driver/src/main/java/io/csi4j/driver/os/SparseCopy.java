package io.csi4j.driver.os;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * A real, sparse-aware copy for filesystems without reflink: walks the source's data extents with
 * lseek(SEEK_DATA/SEEK_HOLE) and copies only those, with pread/pwrite. Holes stay holes, and blocks of
 * zeros inside data extents become holes too. Deliberately not copy_file_range (nor Files.copy):
 * on xfs and btrfs those may share extents instead of copying.
 */
public final class SparseCopy {
    private SparseCopy() {}

    private static final int SEEK_DATA = 3;
    private static final int SEEK_HOLE = 4;
    private static final int CHUNK = 1 << 20;

    /**
     * Copies {@code src} to {@code dst} (created with src's permissions, or truncated), and returns
     * the number of bytes written. Not fsync'ed: callers that need durability call {@link Durable}.
     */
    public static long copy(Path src, Path dst) {
        try (Fd in = Fd.open(src, Libc.O_RDONLY)) {
            Reflink.Target target = Reflink.Target.open(src, in, dst);
            try (Fd out = target.fd(); Arena arena = Arena.ofConfined()) {
                return copyExtents(in, out, arena);
            } catch (RuntimeException e) {
                target.discard();
                throw e;
            }
        }
    }

    private static long copyExtents(Fd in, Fd out, Arena arena) {
        long size = FileStat.of(in).size();
        Libc.ftruncate(out.fd(), size, out.path()); // the tail and every skipped range read as zeros
        MemorySegment buffer = arena.allocate(CHUNK, 4096);
        MemorySegment zeros = arena.allocate(CHUNK, 4096);
        long written = 0;
        long position = 0;
        while (position < size) {
            long dataStart;
            try {
                dataStart = Libc.lseek(in.fd(), position, SEEK_DATA, in.path());
            } catch (OsException e) {
                if (e.is(Errno.ENXIO)) break; // only a hole is left
                throw e;
            }
            long dataEnd = Math.min(Libc.lseek(in.fd(), dataStart, SEEK_HOLE, in.path()), size);
            for (long offset = dataStart; offset < dataEnd; ) {
                long n = Libc.pread(in.fd(), buffer, Math.min(CHUNK, dataEnd - offset), offset, in.path());
                if (n == 0) break; // the file shrank under us
                if (MemorySegment.mismatch(buffer, 0, n, zeros, 0, n) != -1) {
                    writeFully(out, buffer, n, offset);
                    written += n;
                }
                offset += n;
            }
            position = dataEnd;
        }
        return written;
    }

    private static void writeFully(Fd out, MemorySegment buffer, long length, long offset) {
        for (long done = 0; done < length; ) {
            done += Libc.pwrite(out.fd(), buffer.asSlice(done), length - done, offset + done, out.path());
        }
    }
}
