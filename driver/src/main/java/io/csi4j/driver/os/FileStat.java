package io.csi4j.driver.os;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * What statx(2) says about a file: the numbers Java's file attributes don't expose (allocated
 * blocks, device numbers). statx has one layout on every architecture, unlike struct stat.
 */
public record FileStat(long size, long allocatedBytes, int mode, long inode,
                       int deviceMajor, int deviceMinor, int rdevMajor, int rdevMinor) {

    private static final int S_IFMT = 0170000;
    private static final int S_IFBLK = 0060000;
    private static final int S_IFDIR = 0040000;
    private static final int S_IFREG = 0100000;
    private static final int STATX_BASIC_STATS = 0x7ff;
    private static final int STATX_TYPE = 0x1;
    private static final int AT_SYMLINK_NOFOLLOW = 0x100;
    private static final long STATX_SIZE = 256;

    /** What a name is, not following a symlink there: see {@link #typeOf}. */
    public enum Type { MISSING, FILE, DIRECTORY, OTHER }

    /**
     * One statx(2) of {@code path} without following a final symlink (a symlink is OTHER). No exception for
     * a missing name: the engine asks this of names that are mostly not there yet, many times a call.
     */
    public static Type typeOf(Path path) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Libc.errnoState(arena);
            MemorySegment buf = arena.allocate(STATX_SIZE, 8);
            if (Libc.statxRaw(state, Libc.AT_FDCWD, arena.allocateFrom(path.toString()), AT_SYMLINK_NOFOLLOW, STATX_TYPE, buf) != 0) {
                int errno = Libc.errno(state);
                if (errno == Errno.ENOENT || errno == Errno.ENOTDIR) return Type.MISSING;
                throw new OsException("statx", path, errno);
            }
            int mode = Short.toUnsignedInt(buf.get(JAVA_SHORT, 28)) & S_IFMT;
            return mode == S_IFREG ? Type.FILE : mode == S_IFDIR ? Type.DIRECTORY : Type.OTHER;
        }
    }

    /** stat of the file a path names (symlinks followed). */
    public static FileStat of(Path path) {
        return stat(Libc.AT_FDCWD, path.toString(), 0, path);
    }

    static FileStat of(Fd fd) {
        return stat(fd.fd(), "", Libc.AT_EMPTY_PATH, fd.path());
    }

    private static FileStat stat(int dirfd, String name, int flags, Path path) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(STATX_SIZE, 8);
            Libc.statx(dirfd, name, flags, STATX_BASIC_STATS, buf, path);
            return new FileStat(
                    buf.get(JAVA_LONG, 40),
                    buf.get(JAVA_LONG, 48) * 512, // stx_blocks is always in 512-byte units
                    Short.toUnsignedInt(buf.get(JAVA_SHORT, 28)),
                    buf.get(JAVA_LONG, 32),
                    buf.get(JAVA_INT, 136), buf.get(JAVA_INT, 140),
                    buf.get(JAVA_INT, 128), buf.get(JAVA_INT, 132));
        }
    }

    public boolean isBlockDevice() { return (mode & S_IFMT) == S_IFBLK; }

    public boolean isDirectory() { return (mode & S_IFMT) == S_IFDIR; }

    public boolean isRegularFile() { return (mode & S_IFMT) == S_IFREG; }

    /** rwx bits plus setuid/setgid/sticky. */
    public int permissions() { return mode & 07777; }
}
