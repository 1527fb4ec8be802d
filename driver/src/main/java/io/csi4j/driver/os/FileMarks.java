package io.csi4j.driver.os;

import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Durable one-bit marks on a file, kept as {@code user.} extended attributes: "this image is being formatted", "this
 * image is all zeros", "this image stays thick". A mark outlives a crash or a power cut only once the file is
 * fsynced, so {@link #set} and {@link #clear} fsync before they return.
 *
 * <p>The one place that says what a filesystem without user extended attributes means (EOPNOTSUPP): {@link #set}
 * throws it, for callers whose promise needs the mark ({@code ZeroFill}: a thick image must stay thick);
 * {@link #trySet} answers false, for callers that only lose a convenience without it (the format intent: the
 * stage then says what it found instead of redoing a cut-short mkfs). Reading or clearing a mark a filesystem cannot
 * hold answers "not marked" and does nothing.
 */
public final class FileMarks {
    private static final byte[] VALUE = "1".getBytes(StandardCharsets.US_ASCII);

    private FileMarks() {}

    /** Marks the file and fsyncs it; an {@link OsException} (EOPNOTSUPP among others) when it cannot be marked. */
    public static void set(Path file, String mark) {
        try (Fd fd = Fd.open(file, Libc.O_RDONLY)) {
            Libc.fsetxattr(fd.fd(), mark, VALUE, file);
            Libc.fsync(fd.fd(), file);
        }
    }

    /** As {@link #set}, but false, with nothing done, where the file's filesystem holds no user extended attributes. */
    public static boolean trySet(Path file, String mark) {
        try {
            set(file, mark);
            return true;
        } catch (OsException e) {
            if (e.is(Errno.EOPNOTSUPP)) return false;
            throw e;
        }
    }

    /** Whether the file carries the mark (never, where its filesystem holds no user extended attributes). */
    public static boolean has(Path file, String mark) {
        try (Fd fd = Fd.open(file, Libc.O_RDONLY); Arena arena = Arena.ofConfined()) {
            Libc.fgetxattr(fd.fd(), mark, arena.allocate(16), file);
            return true;
        } catch (OsException e) {
            if (e.is(Errno.ENODATA) || e.is(Errno.EOPNOTSUPP)) return false;
            throw e;
        }
    }

    /** Drops the mark and fsyncs the file; nothing at all when the file does not carry it. */
    public static void clear(Path file, String mark) {
        try (Fd fd = Fd.open(file, Libc.O_RDONLY)) {
            try {
                Libc.fremovexattr(fd.fd(), mark, file);
            } catch (OsException e) {
                if (e.is(Errno.ENODATA) || e.is(Errno.EOPNOTSUPP)) return;
                throw e;
            }
            Libc.fsync(fd.fd(), file);
        }
    }
}
