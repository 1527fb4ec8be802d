package io.csi4j.driver.os;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * FIFREEZE/FITHAW: flush a mounted filesystem and block every new write to it, so a reflink of its
 * image taken meanwhile is crash-consistent. Never freeze a filesystem this process must write to
 * while frozen (its own catalog, logs): the write would wait for a thaw that never comes.
 */
public final class Freeze {
    private Freeze() {}

    private static final long FIFREEZE = 0xC0045877L; // _IOWR('X', 119, int)
    private static final long FITHAW = 0xC0045878L;   // _IOWR('X', 120, int)

    /**
     * Freezes the filesystem mounted at {@code mountPoint} (which must be a mount point); EBUSY if it
     * is frozen already.
     */
    public static Frozen freeze(Path mountPoint) {
        return freezeAll(List.of(mountPoint));
    }

    /** Freezes each in order; if one fails, the ones already frozen are thawed before the throw. */
    public static Frozen freezeAll(Collection<Path> mountPoints) {
        List<Fd> frozen = new ArrayList<>();
        try {
            for (Path mountPoint : mountPoints) {
                // FIFREEZE acts on the filesystem holding the path: a staging path that is not mounted
                // (any more) would freeze the node's root filesystem instead
                if (!MountTable.read().isMountPoint(mountPoint)) {
                    throw new IllegalArgumentException(mountPoint + " is not a mount point; refusing to freeze"
                            + " the filesystem that holds it");
                }
                Fd fd = Fd.open(mountPoint, Libc.O_RDONLY);
                try {
                    fd.ioctl(FIFREEZE, 0, "ioctl(FIFREEZE)");
                } catch (RuntimeException e) {
                    fd.close();
                    throw e;
                }
                frozen.add(fd);
            }
        } catch (RuntimeException e) {
            try {
                new Frozen(frozen).close();
            } catch (RuntimeException thaw) {
                e.addSuppressed(thaw);
            }
            throw e;
        }
        return new Frozen(frozen);
    }

    /** Thaws the filesystem at {@code mountPoint}; false if it was not frozen (the kernel says EINVAL). */
    public static boolean thaw(Path mountPoint) {
        try (Fd fd = Fd.open(mountPoint, Libc.O_RDONLY)) {
            return thaw(fd);
        }
    }

    private static boolean thaw(Fd fd) {
        try {
            fd.ioctl(FITHAW, 0, "ioctl(FITHAW)");
            return true;
        } catch (OsException e) {
            if (e.is(Errno.EINVAL)) return false;
            throw e;
        }
    }

    /** Frozen filesystems; {@link #close()} thaws every one of them, even when a thaw fails. */
    public static final class Frozen implements AutoCloseable {
        private final List<Fd> fds;
        private boolean thawed;

        private Frozen(List<Fd> fds) {
            this.fds = List.copyOf(fds);
        }

        public List<Path> mountPoints() {
            return fds.stream().map(Fd::path).toList();
        }

        @Override
        public synchronized void close() {
            if (thawed) return;
            thawed = true;
            RuntimeException failure = null;
            for (Fd fd : fds.reversed()) {
                try {
                    thaw(fd);
                } catch (RuntimeException e) {
                    if (failure == null) failure = e; else failure.addSuppressed(e);
                } finally {
                    fd.close();
                }
            }
            if (failure != null) throw failure;
        }
    }
}
