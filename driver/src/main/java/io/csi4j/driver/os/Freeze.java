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

    /**
     * Freezes them all at once, one platform thread each: FIFREEZE flushes the filesystem first (tens of ms
     * through a loop device), so freezing 8 one after the other cost 8 flushes in a row. Returns when every
     * one is frozen; if one fails, the ones frozen are thawed before the throw.
     */
    public static Frozen freezeAll(Collection<Path> mountPoints) {
        // FIFREEZE acts on the filesystem holding the path: a staging path that is not mounted (any more)
        // would freeze the node's root filesystem instead
        MountTable table = MountTable.read();
        for (Path mountPoint : mountPoints) {
            if (!table.isMountPoint(mountPoint)) {
                throw new IllegalArgumentException(mountPoint + " is not a mount point; refusing to freeze"
                        + " the filesystem that holds it");
            }
        }
        List<Fd> fds = new ArrayList<>();
        try {
            for (Path mountPoint : mountPoints) fds.add(Fd.open(mountPoint, Libc.O_RDONLY));
        } catch (RuntimeException e) {
            fds.forEach(Fd::close);
            throw e;
        }
        RuntimeException[] failures = new RuntimeException[fds.size()];
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < fds.size(); i++) {
            int n = i;
            Runnable freeze = () -> {
                try {
                    fds.get(n).ioctl(FIFREEZE, 0, "ioctl(FIFREEZE)");
                } catch (RuntimeException e) {
                    failures[n] = e;
                }
            };
            // a platform thread: a virtual one would hold its carrier through the native call anyway
            if (fds.size() == 1) freeze.run(); else threads.add(Thread.ofPlatform().name("csi4j-freeze").start(freeze));
        }
        joinUninterruptibly(threads);  // a thaw must know what froze, interrupted or not
        List<Fd> frozen = new ArrayList<>();
        RuntimeException failure = null;
        for (int i = 0; i < fds.size(); i++) {
            if (failures[i] == null) {
                frozen.add(fds.get(i));
            } else {
                fds.get(i).close();
                if (failure == null) failure = failures[i]; else failure.addSuppressed(failures[i]);
            }
        }
        if (failure != null) {
            try {
                new Frozen(frozen).close();
            } catch (RuntimeException thaw) {
                failure.addSuppressed(thaw);
            }
            throw failure;
        }
        return new Frozen(frozen);
    }

    private static void joinUninterruptibly(List<Thread> threads) {
        boolean interrupted = false;
        for (Thread t : threads) {
            while (true) {
                try {
                    t.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
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
