package io.csi4j.driver.os;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;

/** Copy-on-write clones with ioctl(FICLONE): constant time on xfs (reflink=1) and btrfs. */
public final class Reflink {
    private Reflink() {}

    private static final long FICLONE = 0x40049409L; // _IOW(0x94, 9, int)

    /**
     * Makes {@code dst} share all of {@code src}'s extents. dst is created with src's permissions, or
     * truncated if it exists; a dst this call created is removed again when the clone fails.
     */
    public static void clone(Path src, Path dst) {
        try (Fd in = Fd.open(src, Libc.O_RDONLY)) {
            Target out = Target.open(src, in, dst);
            try (Fd fd = out.fd()) {
                Libc.ioctl(fd.fd(), FICLONE, in.fd(), "ioctl(FICLONE)", dst);
            } catch (OsException e) {
                out.discard();
                throw new OsException("ioctl(FICLONE)", src + " -> " + dst, dst, e.errno());
            }
        }
    }

    private static final long FICLONERANGE = 0x4020940DL; // _IOW(0x94, 13, struct file_clone_range): 32 bytes

    /**
     * {@code dst} (which exists) opened to be made, range by range, what {@code src} holds at the same offsets, with
     * the fds opened once however many ranges follow (a cut applies thousands inside a freeze).
     */
    public static Ranges ranges(Path src, Path dst) {
        Fd in = Fd.open(src, Libc.O_RDONLY);
        try {
            return new Ranges(src, dst, in, Fd.open(dst, Libc.O_WRONLY));
        } catch (RuntimeException e) {
            in.close();
            throw e;
        }
    }

    /** See {@link #ranges}. */
    public static final class Ranges implements AutoCloseable {
        private final Path src;
        private final Path dst;
        private final Fd in;
        private final Fd out;
        private final Arena arena = Arena.ofConfined();
        private final MemorySegment range = arena.allocate(32, 8);

        private Ranges(Path src, Path dst, Fd in, Fd out) {
            this.src = src;
            this.dst = dst;
            this.in = in;
            this.out = out;
        }

        /**
         * ioctl(FICLONERANGE): the range of dst shares src's extents at the same offsets (what it held is dropped). Offset
         * and length are multiples of the filesystem's block, but a length that reaches src's end (else EINVAL); the
         * kernel flushes src's dirty pages of the range first, like FICLONE.
         */
        public void clone(long offset, long length) {
            range.set(ValueLayout.JAVA_LONG, 0, in.fd());    // src_fd
            range.set(ValueLayout.JAVA_LONG, 8, offset);     // src_offset
            range.set(ValueLayout.JAVA_LONG, 16, length);    // src_length
            range.set(ValueLayout.JAVA_LONG, 24, offset);    // dest_offset
            try {
                Libc.ioctl(out.fd(), FICLONERANGE, range, "ioctl(FICLONERANGE)", dst);
            } catch (OsException e) {
                throw new OsException("ioctl(FICLONERANGE)", src + " -> " + dst + " [" + offset + ", +" + length + ")", dst, e.errno());
            }
        }

        @Override
        public void close() {
            try (in; out; arena) {
                // all three closed, in reverse order, also when one fails
            }
        }
    }

    /** Whether FICLONE works inside {@code dir}: clones a small probe file there and removes both. */
    public static boolean isSupported(Path dir) {
        String probe = ".csi4j-reflink-probe-" + UUID.randomUUID();
        Path a = dir.resolve(probe + ".a");
        Path b = dir.resolve(probe + ".b");
        try {
            Files.write(a, new byte[] {'c', 's', 'i', '4', 'j'});
            clone(a, b);
            return true;
        } catch (OsException e) {
            if (meansUnsupported(e)) return false;
            throw e;
        } catch (IOException e) {
            throw new UncheckedIOException("reflink probe in " + dir, e);
        } finally {
            deleteQuietly(a);
            deleteQuietly(b);
        }
    }

    /** The errors FICLONE gives when the filesystem (or the pair of files) cannot share extents. */
    static boolean meansUnsupported(OsException e) {
        return e.is(Errno.EOPNOTSUPP) || e.is(Errno.EXDEV) || e.is(Errno.EINVAL) || e.is(Errno.ENOTTY)
                || e.is(Errno.ENOSYS);
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // best effort: a leftover probe file is harmless and visibly named
        }
    }

    /** A copy destination: opened for writing, remembering whether we created it. */
    record Target(Fd fd, Path path, boolean created) {
        static Target open(Path src, Fd srcFd, Path dst) {
            if (Files.exists(dst)) {
                try {
                    if (Files.isSameFile(src, dst)) throw new IllegalArgumentException(dst + " is " + src);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            int mode = FileStat.of(srcFd).permissions();
            try {
                return new Target(Fd.open(dst, Libc.O_WRONLY | Libc.O_CREAT | Libc.O_EXCL, mode), dst, true);
            } catch (OsException e) {
                if (!e.is(Errno.EEXIST)) throw e;
                return new Target(Fd.open(dst, Libc.O_WRONLY | Libc.O_TRUNC), dst, false);
            }
        }

        void discard() {
            if (created) deleteQuietly(path);
        }
    }
}
