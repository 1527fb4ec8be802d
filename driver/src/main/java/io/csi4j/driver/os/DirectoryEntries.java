package io.csi4j.driver.os;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static java.nio.charset.StandardCharsets.UTF_8;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Questions about many names in one directory. Asked about a few of the directory's entries, it makes one
 * statx(2) per name relative to one open descriptor of the directory (a one-component lookup each, no Path,
 * attribute object or exception per name); asked about most of them (a ListVolumes of everything in one page),
 * it reads the directory instead (getdents64(2), hundreds of entries per call): on C1 each downcall costs more
 * than the statx itself (~2.5 microseconds a name; bench/README.md, "Speed on C1").
 */
public final class DirectoryEntries {
    private static final int O_DIRECTORY = 0200000;
    private static final int AT_SYMLINK_NOFOLLOW = 0x100;
    private static final int STATX_TYPE = 0x1;
    private static final int STATX_SIZE = 0x200;
    private static final int S_IFMT = 0170000;
    private static final int S_IFREG = 0100000;
    private static final int NAME_MAX = 255;
    private static final byte DT_UNKNOWN = 0;
    private static final byte DT_REG = 8;
    /**
     * A directory read answers when the directory holds at most this many bytes per name asked about (an entry
     * takes ~50 bytes in XFS and ext4 directories), so that it never costs much more than the lookups would:
     * a page of 500 out of 100,000 volumes still makes 500 lookups.
     */
    private static final long READ_BYTES_PER_NAME = 256;
    private static final int MIN_NAMES_TO_READ = 64;
    private static final int DIRENTS_BYTES = 32 * 1024;

    private DirectoryEntries() {}

    /** Which of {@code names} are regular files in {@code dir} (a symlink is not). Names must be plain file names. */
    public static Set<String> regularFiles(Path dir, Collection<String> names) {
        try (Fd fd = Fd.open(dir, Libc.O_RDONLY | O_DIRECTORY); Arena arena = Arena.ofConfined()) {
            MemorySegment state = Libc.errnoState(arena);
            MemorySegment buf = arena.allocate(256, 8);
            if (names.size() >= MIN_NAMES_TO_READ && readPays(fd, state, buf, arena, names.size())) {
                return read(fd, state, buf, arena, names);
            }
            return lookUp(fd, state, buf, arena, names);
        }
    }

    /** Whether the directory is small enough for a read to cost no more than the lookups (its size, by fstat). */
    private static boolean readPays(Fd fd, MemorySegment state, MemorySegment statx, Arena arena, int names) {
        if (Libc.statxRaw(state, fd.fd(), arena.allocate(1), Libc.AT_EMPTY_PATH, STATX_SIZE, statx) != 0) return false;
        return statx.get(JAVA_LONG, 40) <= names * READ_BYTES_PER_NAME;
    }

    private static byte[] plainName(String n) {
        byte[] bytes = n.getBytes(UTF_8);
        if (bytes.length > NAME_MAX || n.indexOf('/') >= 0 || n.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("not a plain file name: " + n);
        }
        return bytes;
    }

    private static Set<String> lookUp(Fd fd, MemorySegment state, MemorySegment buf, Arena arena, Collection<String> names) {
        Set<String> files = new HashSet<>();
        MemorySegment name = arena.allocate(NAME_MAX + 1);
        for (String n : names) {
            byte[] bytes = plainName(n);
            MemorySegment.copy(bytes, 0, name, JAVA_BYTE, 0, bytes.length);
            name.set(JAVA_BYTE, bytes.length, (byte) 0);
            if (Libc.statxRaw(state, fd.fd(), name, AT_SYMLINK_NOFOLLOW, STATX_TYPE, buf) == 0) {
                if ((Short.toUnsignedInt(buf.get(JAVA_SHORT, 28)) & S_IFMT) == S_IFREG) files.add(n);
            } else {
                int errno = Libc.errno(state);
                if (errno != Errno.ENOENT) throw new OsException("statx", n, fd.path().resolve(n), errno);
            }
        }
        return files;
    }

    /**
     * The wanted names that the directory lists as regular files (d_type; a file system that does not fill it
     * in gets a statx for those names). The entries are copied out of native memory in bulk and parsed as bytes:
     * one accessor call per byte would cost more than the lookups.
     */
    private static Set<String> read(Fd fd, MemorySegment state, MemorySegment buf, Arena arena, Collection<String> names) {
        Set<String> wanted = new HashSet<>(names.size() * 2);   // not Set.copyOf: its probing compares names
        boolean[] lengths = new boolean[NAME_MAX + 1];          // of the wanted names in bytes: most others need no string
        for (String name : names) {
            lengths[plainName(name).length] = true;
            wanted.add(name);
        }
        Set<String> files = new HashSet<>();
        List<String> untyped = new ArrayList<>();
        MemorySegment native_ = arena.allocate(DIRENTS_BYTES, 8);
        byte[] entries = new byte[DIRENTS_BYTES];
        for (long n; (n = Libc.getdents64(fd.fd(), native_, fd.path())) > 0; ) {
            MemorySegment.copy(native_, JAVA_BYTE, 0, entries, 0, (int) n);
            // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name (NUL-terminated)
            for (int at = 0; at < n; ) {
                int reclen = (entries[at + 16] & 0xff) | (entries[at + 17] & 0xff) << 8;
                byte type = entries[at + 18];
                if (type == DT_REG || type == DT_UNKNOWN) {
                    int end = at + 19;
                    while (entries[end] != 0) end++;
                    int length = end - at - 19;
                    if (length <= NAME_MAX && lengths[length]) {
                        String name = new String(entries, at + 19, length, UTF_8);
                        if (wanted.contains(name)) (type == DT_REG ? files : untyped).add(name);
                    }
                }
                at += reclen;
            }
        }
        if (!untyped.isEmpty()) files.addAll(lookUp(fd, state, buf, arena, untyped));
        return files;
    }
}
