package io.csi4j.driver.os;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static java.nio.charset.StandardCharsets.UTF_8;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;

/**
 * Questions about many names in one directory, answered with one statx(2) per name relative to one open
 * descriptor of the directory: a one-component lookup each instead of a walk of the whole path, and no
 * Path, attribute object or exception per name. A page of ListVolumes asks this for every volume on it.
 */
public final class DirectoryEntries {
    private static final int O_DIRECTORY = 0200000;
    private static final int AT_SYMLINK_NOFOLLOW = 0x100;
    private static final int STATX_TYPE = 0x1;
    private static final int S_IFMT = 0170000;
    private static final int S_IFREG = 0100000;
    private static final int NAME_MAX = 255;

    private DirectoryEntries() {}

    /** Which of {@code names} are regular files in {@code dir} (a symlink is not). Names must be plain file names. */
    public static Set<String> regularFiles(Path dir, Collection<String> names) {
        Set<String> files = new HashSet<>();
        try (Fd fd = Fd.open(dir, Libc.O_RDONLY | O_DIRECTORY); Arena arena = Arena.ofConfined()) {
            MemorySegment state = Libc.errnoState(arena);
            MemorySegment buf = arena.allocate(256, 8);
            MemorySegment name = arena.allocate(NAME_MAX + 1);
            for (String n : names) {
                byte[] bytes = n.getBytes(UTF_8);
                if (bytes.length > NAME_MAX || n.indexOf('/') >= 0 || n.indexOf('\0') >= 0) {
                    throw new IllegalArgumentException("not a plain file name: " + n);
                }
                MemorySegment.copy(bytes, 0, name, JAVA_BYTE, 0, bytes.length);
                name.set(JAVA_BYTE, bytes.length, (byte) 0);
                if (Libc.statxRaw(state, fd.fd(), name, AT_SYMLINK_NOFOLLOW, STATX_TYPE, buf) == 0) {
                    if ((Short.toUnsignedInt(buf.get(JAVA_SHORT, 28)) & S_IFMT) == S_IFREG) files.add(n);
                } else {
                    int errno = Libc.errno(state);
                    if (errno != Errno.ENOENT) throw new OsException("statx", n, dir.resolve(n), errno);
                }
            }
        }
        return files;
    }
}
