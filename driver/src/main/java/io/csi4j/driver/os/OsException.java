package io.csi4j.driver.os;

import java.nio.file.Path;

/**
 * A failed system call, with the errno the kernel gave. The message names the call, the subject
 * and the error: {@code mount(/a -> /b): EBUSY (Device or resource busy)}.
 */
public final class OsException extends RuntimeException {
    private final String call;
    private final Path path;
    private final int errno;

    /** @param subject what the call acted on, as shown in the message ("/a -> /b"); often just the path */
    public OsException(String call, String subject, Path path, int errno) {
        super(where(call, subject) + ": " + Errno.name(errno) + " (" + Errno.describe(errno) + ")");
        this.call = call;
        this.path = path;
        this.errno = errno;
    }

    /** "mount(/a -> /b)", or "ioctl(FICLONE) on /a -> /b" when the call names its request already. */
    private static String where(String call, String subject) {
        return call.endsWith(")") ? call + " on " + subject : call + "(" + subject + ")";
    }

    public OsException(String call, Path path, int errno) {
        this(call, String.valueOf(path), path, errno);
    }

    /** The call that failed, e.g. "mount" or "ioctl(FICLONE)". */
    public String call() { return call; }

    /** The main path the call acted on; null when there was none. */
    public Path path() { return path; }

    public int errno() { return errno; }

    /** "ENOSPC", "EBUSY", ... */
    public String errnoName() { return Errno.name(errno); }

    public boolean is(int errno) { return this.errno == errno; }
}
