package io.csi4j.driver.os;

/** Linux errno values callers branch on (identical on x86_64 and aarch64). */
public final class Errno {
    private Errno() {}

    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int ESRCH = 3;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int ENXIO = 6;
    public static final int EBADF = 9;
    public static final int EAGAIN = 11;
    public static final int EACCES = 13;
    public static final int ENOTBLK = 15;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int EXDEV = 18;
    public static final int ENODEV = 19;
    public static final int ENOTDIR = 20;
    public static final int EISDIR = 21;
    public static final int EINVAL = 22;
    public static final int ENOTTY = 25;
    public static final int EFBIG = 27;
    public static final int ENOSPC = 28;
    public static final int EROFS = 30;
    public static final int ENOSYS = 38;
    public static final int ENODATA = 61;
    public static final int EOPNOTSUPP = 95;

    /** Symbolic name ("EBUSY") from glibc's strerrorname_np, or "errno N" where libc lacks it. */
    public static String name(int errno) {
        return Libc.errnoName(errno);
    }

    /** Human text ("Device or resource busy") from strerror. */
    public static String describe(int errno) {
        return Libc.strerror(errno);
    }
}
