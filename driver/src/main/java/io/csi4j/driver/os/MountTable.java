package io.csi4j.driver.os;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The kernel's mount table as read from /proc/self/mountinfo at one instant. It is the source of
 * truth for what is mounted, so there is no cache: every {@link #read()} asks the kernel again.
 */
public final class MountTable {
    private static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");

    private final List<MountInfo> mounts;

    private MountTable(List<MountInfo> mounts) {
        this.mounts = List.copyOf(mounts);
    }

    /**
     * Reads the table now. mountinfo is produced page by page, so a mount or unmount racing with the
     * read can tear it; like Kubernetes' mount-utils we read until two reads agree (at most 3 tries).
     */
    public static MountTable read() {
        try {
            String previous = Files.readString(MOUNTINFO);
            for (int attempt = 0; attempt < 3; attempt++) {
                String current = Files.readString(MOUNTINFO);
                if (current.equals(previous)) break;
                previous = current;
            }
            return parse(previous);
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + MOUNTINFO, e);
        }
    }

    public static MountTable parse(String mountinfo) {
        List<MountInfo> mounts = new ArrayList<>();
        for (String line : mountinfo.split("\n")) {
            if (!line.isBlank()) mounts.add(parseLine(line));
        }
        return new MountTable(mounts);
    }

    /** {@code 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue} */
    static MountInfo parseLine(String line) {
        String[] f = line.split(" ", -1);
        int separator = Arrays.asList(f).indexOf("-");
        if (f.length < 10 || separator < 6 || f.length < separator + 4) {
            throw new IllegalArgumentException("malformed mountinfo line: " + line);
        }
        String[] device = f[2].split(":");
        return new MountInfo(
                Integer.parseInt(f[0]), Integer.parseInt(f[1]),
                Integer.parseInt(device[0]), Integer.parseInt(device[1]),
                unescape(f[3]), Path.of(unescape(f[4])),
                options(f[5]), List.of(f).subList(6, separator),
                unescape(f[separator + 1]), unescape(f[separator + 2]), options(f[separator + 3]));
    }

    private static List<String> options(String field) {
        return Arrays.stream(field.split(",")).map(MountTable::unescape).toList();
    }

    /** The kernel writes space, tab, newline and backslash as octal escapes (\040, \011, \012, \134). */
    static String unescape(String s) {
        if (s.indexOf('\\') < 0) return s;
        StringBuilder out = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && isOctal(s, i + 1)) {
                out.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static boolean isOctal(String s, int from) {
        if (from + 3 > s.length()) return false;
        for (int i = from; i < from + 3; i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '7') return false;
        }
        return true;
    }

    public List<MountInfo> mounts() {
        return mounts;
    }

    /** The mount on top at exactly this mount point (a later mount over the same point hides earlier ones). */
    public Optional<MountInfo> at(Path mountPoint) {
        Path wanted = canonical(mountPoint);
        List<MountInfo> stacked = mounts.stream().filter(m -> m.mountPoint().equals(wanted)).toList();
        return stacked.stream()
                .filter(m -> stacked.stream().noneMatch(other -> other.parentId() == m.id()))
                .reduce((first, second) -> second);
    }

    public boolean isMountPoint(Path path) {
        return at(path).isPresent();
    }

    public List<MountInfo> bySource(String source) {
        return mounts.stream().filter(m -> m.source().equals(source)).toList();
    }

    /**
     * Mounts of a block device: by source path, or by device number (a device can be mounted through
     * another node or symlink). Btrfs mounts show an anonymous device number, so only the source matches.
     */
    public List<MountInfo> mountsOf(Path device) {
        Path node = canonical(device);
        FileStat stat = Files.exists(node) ? FileStat.of(node) : null;
        boolean block = stat != null && stat.isBlockDevice();
        return mounts.stream()
                .filter(m -> m.source().equals(device.toString()) || m.source().equals(node.toString())
                        || (block && m.major() == stat.rdevMajor() && m.minor() == stat.rdevMinor()))
                .toList();
    }

    /** Mounts at or below a directory, deepest and newest first: the order to unmount them in. */
    public List<MountInfo> under(Path dir) {
        Path base = canonical(dir);
        return mounts.reversed().stream()
                .filter(m -> m.mountPoint().startsWith(base))
                .sorted((a, b) -> Integer.compare(b.mountPoint().getNameCount(), a.mountPoint().getNameCount()))
                .toList();
    }

    /** Mount points in mountinfo are absolute and free of symlinks; make a query path the same. */
    static Path canonical(Path path) {
        Path absolute = Objects.requireNonNull(path).toAbsolutePath().normalize();
        try {
            return absolute.toRealPath();
        } catch (IOException e) {
            return absolute; // gone, or a dead mount (ENOTCONN): compare as written
        }
    }
}
