package io.csi4j.driver.os;

import java.io.IOException;
import java.io.UncheckedIOException;
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
