package io.csi4j.driver.os;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Downcall handles into the C library, with errno captured by the linker (reading errno after the
 * call from Java would see whatever the JVM did in between). Every wrapper throws {@link OsException}
 * on -1 and retries EINTR. Layouts assume 64-bit Linux (x86_64, aarch64).
 */
@SuppressWarnings("restricted") // this class is where native access is meant to happen
final class Libc {
    private Libc() {}

    static final int O_RDONLY = 0;
    static final int O_WRONLY = 1;
    static final int O_RDWR = 2;
    static final int O_CREAT = 0100;
    static final int O_EXCL = 0200;
    static final int O_TRUNC = 01000;
    static final int O_CLOEXEC = 02000000;
    static final int O_DIRECT = 040000;

    static final int AT_FDCWD = -100;
    static final int AT_EMPTY_PATH = 0x1000;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup C = LINKER.defaultLookup();
    private static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE.varHandle(PathElement.groupElement("errno"));

    // Each handle sits in a holder class of its own, made at its first call: linking a downcall spins classes
    // (~3 ms per signature at start-up), and the plugin's start needs only a few of them.
    private static final class Open { static final MethodHandle HANDLE = capturing("open",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT), Linker.Option.firstVariadicArg(2)); }
    private static final class Close { static final MethodHandle HANDLE = capturing("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT)); }
    private static final class IoctlLong { static final MethodHandle HANDLE = capturing("ioctl",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG), Linker.Option.firstVariadicArg(2)); }
    private static final class IoctlPtr { static final MethodHandle HANDLE = capturing("ioctl",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS), Linker.Option.firstVariadicArg(2)); }
    private static final class Mount { static final MethodHandle HANDLE = capturing("mount",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS)); }
    // syscall(2) for the new mount API (no glibc wrappers before 2.36); numbers are the same on x86_64 and aarch64
    private static final class Syscall { static final MethodHandle HANDLE = capturing("syscall", FunctionDescriptor.of(JAVA_LONG,
                JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG), Linker.Option.firstVariadicArg(1)); }
    private static final class Umount2 { static final MethodHandle HANDLE = capturing("umount2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT)); }
    private static final class Statfs { static final MethodHandle HANDLE = capturing("statfs", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS)); }
    private static final class Statx { static final MethodHandle HANDLE = capturing("statx",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS)); }
    private static final class Getdents64 { static final MethodHandle HANDLE = capturing("getdents64",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG)); }
    private static final class Fallocate { static final MethodHandle HANDLE = capturing("fallocate",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG)); }
    private static final class Lseek { static final MethodHandle HANDLE = capturing("lseek", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT)); }
    private static final class Pread { static final MethodHandle HANDLE = capturing("pread",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG)); }
    private static final class Pwrite { static final MethodHandle HANDLE = capturing("pwrite",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG)); }
    private static final class Ftruncate { static final MethodHandle HANDLE = capturing("ftruncate", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG)); }
    private static final class Fsync { static final MethodHandle HANDLE = capturing("fsync", FunctionDescriptor.of(JAVA_INT, JAVA_INT)); }
    private static final class Rename { static final MethodHandle HANDLE = capturing("rename", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS)); }
    private static final class Mknod { static final MethodHandle HANDLE = capturing("mknod", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG)); }
    private static final class Fsetxattr { static final MethodHandle HANDLE = capturing("fsetxattr",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT)); }
    private static final class Fgetxattr { static final MethodHandle HANDLE = capturing("fgetxattr",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG)); }
    private static final class Fremovexattr { static final MethodHandle HANDLE = capturing("fremovexattr",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS)); }
    private static final class Unshare { static final MethodHandle HANDLE = capturing("unshare", FunctionDescriptor.of(JAVA_INT, JAVA_INT)); }
    // sched_*(2) with pid 0: the calling thread (UrgentThread)
    private static final class SchedGetscheduler { static final MethodHandle HANDLE = capturing("sched_getscheduler", FunctionDescriptor.of(JAVA_INT, JAVA_INT)); }
    private static final class SchedGetparam { static final MethodHandle HANDLE = capturing("sched_getparam", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS)); }
    private static final class SchedSetscheduler { static final MethodHandle HANDLE = capturing("sched_setscheduler",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS)); }
    private static final class Strerror { static final MethodHandle HANDLE = plain("strerror", FunctionDescriptor.of(ADDRESS, JAVA_INT)).orElseThrow(); }
    // glibc >= 2.32; other C libraries fall back to "errno N"
    private static final class StrerrorName { static final Optional<MethodHandle> HANDLE = plain("strerrorname_np", FunctionDescriptor.of(ADDRESS, JAVA_INT)); }

    private static MethodHandle capturing(String name, FunctionDescriptor fd, Linker.Option... extra) {
        Linker.Option[] options = new Linker.Option[extra.length + 1];
        options[0] = Linker.Option.captureCallState("errno");
        System.arraycopy(extra, 0, options, 1, extra.length);
        MemorySegment symbol = C.find(name).orElseThrow(() -> new UnsatisfiedLinkError("libc has no " + name));
        return LINKER.downcallHandle(symbol, fd, options);
    }

    private static Optional<MethodHandle> plain(String name, FunctionDescriptor fd) {
        return C.find(name).map(symbol -> LINKER.downcallHandle(symbol, fd));
    }

    /** One native call: gets a scratch arena and the errno capture segment; returns the C result. */
    @FunctionalInterface
    private interface Call {
        long invoke(Arena arena, MemorySegment errnoState) throws Throwable;
    }

    private static long check(String call, String subject, Path path, Call body) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CAPTURE);
            while (true) {
                long result = body.invoke(arena, state);
                if (result != -1) return result;
                int errno = (int) ERRNO.get(state, 0L);
                if (errno != Errno.EINTR) throw new OsException(call, subject, path, errno);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("native call " + call + " failed", t);
        }
    }

    private static long check(String call, Path path, Call body) {
        return check(call, String.valueOf(path), path, body);
    }

    private static MemorySegment cString(Arena arena, String s) {
        return s == null ? MemorySegment.NULL : arena.allocateFrom(s);
    }

    static int open(Path path, int flags, int mode) {
        return (int) check("open", path, (a, e) -> (int) Open.HANDLE.invokeExact(e, cString(a, path.toString()), flags, mode));
    }

    /** close(2) always releases the descriptor on Linux, so errors (and EINTR) are not worth a throw. */
    static void close(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            int ignored = (int) Close.HANDLE.invokeExact(arena.allocate(CAPTURE), fd);
        } catch (Throwable t) {
            throw new IllegalStateException("close(" + fd + ")", t);
        }
    }

    static int ioctl(int fd, long request, long arg, String call, Path path) {
        return (int) check(call, path, (a, e) -> (int) IoctlLong.HANDLE.invokeExact(e, fd, request, arg));
    }

    static int ioctl(int fd, long request, MemorySegment arg, String call, Path path) {
        return (int) check(call, path, (a, e) -> (int) IoctlPtr.HANDLE.invokeExact(e, fd, request, arg));
    }

    static void mount(String source, String target, String fsType, long flags, String data, String subject, Path path) {
        check("mount", subject, path, (a, e) -> (int) Mount.HANDLE.invokeExact(e,
                cString(a, source), cString(a, target), cString(a, fsType), flags, cString(a, data)));
    }

    private static final long SYS_OPEN_TREE = 428, SYS_MOVE_MOUNT = 429, SYS_MOUNT_SETATTR = 442;
    private static final long OPEN_TREE_CLONE = 1, OPEN_TREE_CLOEXEC = 02000000,
            MOVE_MOUNT_F_EMPTY_PATH = 4;

    /** open_tree(2) with OPEN_TREE_CLONE: a detached bind of what is at {@code path} (not recursive); its fd. */
    static int openTreeClone(Path path) {
        return (int) check("open_tree", path, (a, e) -> (long) Syscall.HANDLE.invokeExact(e, SYS_OPEN_TREE, (long) AT_FDCWD,
                cString(a, path.toString()).address(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC, 0L, 0L));
    }

    /** mount_setattr(2) on a mount fd: struct mount_attr {attr_set, attr_clr, propagation, userns_fd}. */
    static void mountSetattr(int fd, long set, long clear, Path path) {
        check("mount_setattr", path, (a, e) -> {
            MemorySegment attr = a.allocate(32, 8);
            attr.set(JAVA_LONG, 0, set);
            attr.set(JAVA_LONG, 8, clear);
            return (long) Syscall.HANDLE.invokeExact(e, SYS_MOUNT_SETATTR, (long) fd, a.allocateFrom("").address(), (long) AT_EMPTY_PATH,
                    attr.address(), 32L);
        });
    }

    /** move_mount(2) of a detached mount fd onto {@code target}: attached there, and propagated from there. */
    static void moveMount(int fd, Path target) {
        check("move_mount", target, (a, e) -> (long) Syscall.HANDLE.invokeExact(e, SYS_MOVE_MOUNT, (long) fd,
                a.allocateFrom("").address(), (long) AT_FDCWD, cString(a, target.toString()).address(), MOVE_MOUNT_F_EMPTY_PATH));
    }

    private static final long SYS_QUOTACTL_FD = 443;

    /** quotactl_fd(2) (Linux 5.14+): a quota command on the filesystem holding {@code fd}; no device path needed. */
    static void quotactlFd(int fd, int cmd, int id, MemorySegment addr, Path path) {
        check("quotactl_fd", path, (a, e) -> (long) Syscall.HANDLE.invokeExact(e, SYS_QUOTACTL_FD, (long) fd, (long) cmd,
                Integer.toUnsignedLong(id), addr.address(), 0L));
    }

    static void umount2(Path target, int flags) {
        check("umount2", target, (a, e) -> (int) Umount2.HANDLE.invokeExact(e, cString(a, target.toString()), flags));
    }

    static void statfs(Path path, MemorySegment buf) {
        check("statfs", path, (a, e) -> (int) Statfs.HANDLE.invokeExact(e, cString(a, path.toString()), buf));
    }

    /** statx on a path (dirfd AT_FDCWD) or, with an empty path and AT_EMPTY_PATH, on an open fd. */
    static void statx(int dirfd, String pathname, int flags, int mask, MemorySegment buf, Path path) {
        check("statx", path, (a, e) -> (int) Statx.HANDLE.invokeExact(e, dirfd, cString(a, pathname), flags, mask, buf));
    }

    /** The errno capture segment for {@link #statxRaw}, to be reused across calls. */
    static MemorySegment errnoState(Arena arena) {
        return arena.allocate(CAPTURE);
    }

    static int errno(MemorySegment errnoState) {
        return (int) ERRNO.get(errnoState, 0L);
    }

    /**
     * statx(2) with every buffer supplied by the caller and no exception: -1 and errno in {@code errnoState}
     * on failure. For loops over many names, where the scratch arena and exception of each checked call
     * would cost more than the system call.
     */
    static int statxRaw(MemorySegment errnoState, int dirfd, MemorySegment name, int flags, int mask, MemorySegment buf) {
        try {
            return (int) Statx.HANDLE.invokeExact(errnoState, dirfd, name, flags, mask, buf);
        } catch (Throwable t) {
            throw new IllegalStateException("native call statx failed", t);
        }
    }

    /** getdents64(2): the next directory entries of {@code fd} into {@code buf}; 0 at the end. */
    static long getdents64(int fd, MemorySegment buf, Path path) {
        return check("getdents64", path, (a, e) -> (long) Getdents64.HANDLE.invokeExact(e, fd, buf, buf.byteSize()));
    }

    static void fallocate(int fd, int mode, long offset, long length, Path path) {
        check("fallocate", path, (a, e) -> (int) Fallocate.HANDLE.invokeExact(e, fd, mode, offset, length));
    }

    static long lseek(int fd, long offset, int whence, Path path) {
        return check("lseek", path, (a, e) -> (long) Lseek.HANDLE.invokeExact(e, fd, offset, whence));
    }

    static long pread(int fd, MemorySegment buf, long count, long offset, Path path) {
        return check("pread", path, (a, e) -> (long) Pread.HANDLE.invokeExact(e, fd, buf, count, offset));
    }

    static long pwrite(int fd, MemorySegment buf, long count, long offset, Path path) {
        return check("pwrite", path, (a, e) -> (long) Pwrite.HANDLE.invokeExact(e, fd, buf, count, offset));
    }

    static void ftruncate(int fd, long length, Path path) {
        check("ftruncate", path, (a, e) -> (int) Ftruncate.HANDLE.invokeExact(e, fd, length));
    }

    static void fsetxattr(int fd, String name, byte[] value, Path path) {
        check("fsetxattr", path, (a, e) -> (int) Fsetxattr.HANDLE.invokeExact(e, fd, a.allocateFrom(name),
                a.allocateFrom(java.lang.foreign.ValueLayout.JAVA_BYTE, value), (long) value.length, 0));
    }

    /** fgetxattr(2) into {@code buf}: the value's length. */
    static long fgetxattr(int fd, String name, MemorySegment buf, Path path) {
        return check("fgetxattr", path, (a, e) -> (long) Fgetxattr.HANDLE.invokeExact(e, fd, a.allocateFrom(name), buf, buf.byteSize()));
    }

    static void fremovexattr(int fd, String name, Path path) {
        check("fremovexattr", path, (a, e) -> (int) Fremovexattr.HANDLE.invokeExact(e, fd, a.allocateFrom(name)));
    }

    static void fsync(int fd, Path path) {
        check("fsync", path, (a, e) -> (int) Fsync.HANDLE.invokeExact(e, fd));
    }

    static void rename(Path from, Path to) {
        check("rename", from + " -> " + to, to,
                (a, e) -> (int) Rename.HANDLE.invokeExact(e, cString(a, from.toString()), cString(a, to.toString())));
    }

    static void mknod(Path path, int mode, long dev) {
        check("mknod", path, (a, e) -> (int) Mknod.HANDLE.invokeExact(e, cString(a, path.toString()), mode, dev));
    }

    /** unshare(2) for the calling thread. */
    static void unshare(int flags, String subject) {
        check("unshare", subject, null, (a, e) -> (int) Unshare.HANDLE.invokeExact(e, flags));
    }

    /** The calling thread's scheduling policy (with SCHED_RESET_ON_FORK when set). */
    static int schedGetscheduler() {
        return (int) check("sched_getscheduler", "the calling thread", null, (a, e) -> (int) SchedGetscheduler.HANDLE.invokeExact(e, 0));
    }

    /** The calling thread's static (real-time) priority: struct sched_param {int sched_priority}. */
    static int schedGetparam() {
        long[] priority = {0};
        check("sched_getparam", "the calling thread", null, (a, e) -> {
            MemorySegment param = a.allocate(JAVA_INT);
            int r = (int) SchedGetparam.HANDLE.invokeExact(e, 0, param);
            priority[0] = param.get(JAVA_INT, 0);
            return r;
        });
        return (int) priority[0];
    }

    static void schedSetscheduler(int policy, int priority) {
        check("sched_setscheduler", "the calling thread", null, (a, e) -> {
            MemorySegment param = a.allocate(JAVA_INT);
            param.set(JAVA_INT, 0, priority);
            return (int) SchedSetscheduler.HANDLE.invokeExact(e, 0, policy, param);
        });
    }

    static String strerror(int errno) {
        try {
            MemorySegment text = (MemorySegment) Strerror.HANDLE.invokeExact(errno);
            return text.reinterpret(256).getString(0);
        } catch (Throwable t) {
            return "errno " + errno;
        }
    }

    static String errnoName(int errno) {
        if (StrerrorName.HANDLE.isEmpty()) return "errno " + errno;
        try {
            MemorySegment name = (MemorySegment) StrerrorName.HANDLE.get().invokeExact(errno);
            return name.equals(MemorySegment.NULL) ? "errno " + errno : name.reinterpret(64).getString(0);
        } catch (Throwable t) {
            return "errno " + errno;
        }
    }
}
