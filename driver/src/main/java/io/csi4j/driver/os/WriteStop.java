package io.csi4j.driver.os;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.EnumSet;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Stops every write to a mounted filesystem at once, for a fenced replica (docs/design.md, "Replicated volumes").
 * First choice: {@code mount -o remount,ro} of the filesystem (MS_REMOUNT|MS_RDONLY, the superblock): every mount of
 * it, the bind mounts of a publish included, then answers EROFS, a clear error, and what was written stays
 * consistent on disk. The kernel refuses it (EBUSY) while a file is open for writing, so it is tried a few times
 * (a writer that opens, writes and closes leaves gaps); when it still cannot, FS_IOC_SHUTDOWN (ext4 and xfs): the
 * log is flushed and every later write fails with EIO. A freeze (FIFREEZE) is not used: it would make the pod's
 * writes hang, and a thaw would let them through.
 */
public final class WriteStop {
    private WriteStop() {}

    /** What was done to one filesystem. */
    public enum Outcome { ALREADY_READ_ONLY, REMOUNTED_READ_ONLY, SHUT_DOWN }

    private static final long FS_IOC_SHUTDOWN = 0x8004587DL;   // _IOR('X', 125, __u32), ext4 and xfs
    private static final int SHUTDOWN_LOGFLUSH = 1;
    private static final int ATTEMPTS = 20;
    private static final long PAUSE_MS = 50;

    /** The filesystem mounted at {@code mountPoint} (a mount point, else IllegalArgumentException) stops taking writes. */
    public static Outcome stop(Path mountPoint) {
        var mount = MountTable.read().at(mountPoint)
                .orElseThrow(() -> new IllegalArgumentException(mountPoint + " is not a mount point; refusing to remount the filesystem that holds it"));
        if (mount.superOptions().contains("ro")) return Outcome.ALREADY_READ_ONLY;
        OsException last = null;
        for (int i = 0; i < ATTEMPTS; i++) {
            try {
                Mounts.mount(null, mountPoint, null, EnumSet.of(MountFlag.REMOUNT, MountFlag.RDONLY), null);
                return Outcome.REMOUNTED_READ_ONLY;
            } catch (OsException e) {
                last = e;
                if (!e.is(Errno.EBUSY)) break;                 // a shut-down filesystem answers otherwise: shut it (again)
                try {
                    Thread.sleep(PAUSE_MS);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        Fd fd;
        try {
            fd = Fd.open(mountPoint, Libc.O_RDONLY);
        } catch (OsException e) {
            if (e.is(Errno.EIO)) return Outcome.SHUT_DOWN;     // xfs shut down already: even its root does not open
            if (last != null) e.addSuppressed(last);
            throw e;
        }
        try (fd; Arena arena = Arena.ofConfined()) {
            MemorySegment flags = arena.allocate(JAVA_INT);
            flags.set(JAVA_INT, 0, SHUTDOWN_LOGFLUSH);
            fd.ioctl(FS_IOC_SHUTDOWN, flags, "ioctl(FS_IOC_SHUTDOWN)");
            return Outcome.SHUT_DOWN;
        } catch (OsException e) {
            if (last != null) e.addSuppressed(last);
            throw e;
        }
    }
}
