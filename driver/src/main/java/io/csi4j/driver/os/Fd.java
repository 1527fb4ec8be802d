package io.csi4j.driver.os;

import java.nio.file.Path;
import java.lang.foreign.MemorySegment;

/** An open file descriptor and the path it was opened from (for error messages). */
record Fd(int fd, Path path) implements AutoCloseable {

    static Fd open(Path path, int flags) {
        return open(path, flags, 0);
    }

    static Fd open(Path path, int flags, int mode) {
        return new Fd(Libc.open(path, flags | Libc.O_CLOEXEC, mode), path);
    }

    int ioctl(long request, long arg, String call) {
        return Libc.ioctl(fd, request, arg, call, path);
    }

    int ioctl(long request, MemorySegment arg, String call) {
        return Libc.ioctl(fd, request, arg, call, path);
    }

    @Override
    public void close() {
        Libc.close(fd);
    }
}
