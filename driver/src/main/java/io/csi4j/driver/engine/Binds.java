package io.csi4j.driver.engine;

import io.csi4j.driver.storage.StorageException;
import io.csi4j.driver.os.Errno;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountFlag;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.Mounts;
import io.csi4j.driver.os.OsException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;

/**
 * Node-side mount plumbing both engines share: publishing a directory or a device node by bind
 * mount, recognising our mounts in the kernel's table (never from memory), unpublishing.
 */
public final class Binds {
    private Binds() {}

    private static final Pattern LOOP_NODE = Pattern.compile("/dev/loop(\\d+)");
    private static final int LOOP_MAJOR = 7;

    /**
     * What a bind mount of {@code path} looks like in mountinfo: the device of the filesystem holding
     * it, and the path inside that filesystem ({@code root}). Two mounts with the same identity show
     * the same files.
     */
    public record Identity(int major, int minor, String root) {
        public boolean matches(MountInfo m) {
            return m.major() == major && m.minor() == minor && m.root().equals(root);
        }

        /** Also mounts of a subdirectory of this one. */
        boolean covers(MountInfo m) {
            return m.major() == major && m.minor() == minor
                    && (m.root().equals(root) || m.root().startsWith(root.equals("/") ? "/" : root + "/"));
        }
    }

    /** The identity a bind mount of {@code path} would have; empty when no mount holds the path. */
    public static Optional<Identity> identity(MountTable table, Path path) {
        Path real;
        try {
            real = path.toRealPath();
        } catch (IOException e) {
            return Optional.empty();
        }
        Optional<MountInfo> holder = table.mounts().stream()
                .filter(m -> real.startsWith(m.mountPoint()))
                .max(Comparator.comparingInt(m -> m.mountPoint().getNameCount()))
                .flatMap(m -> table.at(m.mountPoint()));
        return holder.map(m -> {
            Path inside = m.mountPoint().relativize(real);
            String root = m.root().equals("/") ? "" : m.root();
            String joined = inside.toString().isEmpty() ? (root.isEmpty() ? "/" : root) : root + "/" + inside;
            return new Identity(m.major(), m.minor(), joined);
        });
    }

    /**
     * Mounts showing exactly {@code path}'s files (other than at {@code path} itself): binds of a directory,
     * or of a device node (block publications show the node, not the device's filesystem).
     */
    public static List<MountInfo> bindsOf(MountTable table, Path path) {
        Path real = canonical(path);
        return identity(table, path)
                .map(id -> table.mounts().stream().filter(m -> id.matches(m) && !m.mountPoint().equals(real)).toList())
                .orElse(List.of());
    }

    /** The loop device a mount comes from, if it is one that is still bound. */
    public static Optional<LoopDevice> loopOf(MountInfo mount) {
        Matcher m = LOOP_NODE.matcher(mount.source());
        if (m.matches()) return LoopDevice.find(Integer.parseInt(m.group(1)));
        if (mount.major() == LOOP_MAJOR) return LoopDevice.find(mount.minor());
        return Optional.empty();
    }

    public static boolean isLoopOf(MountInfo mount, Path image) {
        Path wanted = canonical(image);
        return loopOf(mount).filter(d -> !d.backingFileDeleted() && d.backingFile().equals(wanted)).isPresent();
    }

    /** Like {@link #isLoopOf}, but also when the image has been deleted since: such a mount must still come down. */
    public static boolean wasLoopOf(MountInfo mount, Path image) {
        Path wanted = canonical(image);
        return loopOf(mount).filter(d -> d.backingFile().equals(wanted)).isPresent();
    }

    /** Loop devices bound to {@code image}, also ones whose file has been deleted since (to tear them down). */
    public static List<LoopDevice> loopsOf(Path image) {
        Path wanted = canonical(image);
        return LoopDevice.list().stream().filter(d -> d.backingFile().equals(wanted)).toList();
    }

    /**
     * Bind-mounts directory {@code source} at {@code target} (created if missing), read-only and
     * with the per-mount flags asked for. Idempotent: an identical bind already there is fine; a
     * different mount there is EXISTS (the spec's "published but incompatible").
     */
    public static void bindDirectory(Path source, Path target, boolean readOnly, MountOptions options) {
        try {
            Files.createDirectories(target);
        } catch (IOException e) {
            throw new UncheckedIOException("creating " + target, e);
        }
        bind(source, target, readOnly, options);
    }

    /** Bind-mounts a device node onto an empty file at {@code target} (created if missing). */
    public static void bindDevice(Path node, Path target, boolean readOnly) {
        try {
            Files.createDirectories(target.getParent());
            if (PoolLayout.type(target) == PoolLayout.EntryType.MISSING) Files.createFile(target);
        } catch (FileAlreadyExistsException ignored) {
            // a concurrent or earlier publish made it
        } catch (IOException e) {
            throw new UncheckedIOException("creating " + target, e);
        }
        bind(node, target, readOnly, MountOptions.parse(List.of()));
    }

    private static void bind(Path source, Path target, boolean readOnly, MountOptions options) {
        MountTable table = MountTable.read();
        Optional<MountInfo> existing = table.at(target);
        if (existing.isPresent()) {
            Optional<Identity> wanted = identity(table, source);
            MountInfo there = existing.get();
            if (wanted.isPresent() && wanted.get().matches(there) && there.readOnly() == readOnly) return;
            throw StorageException.exists(target + " already has " + there.source() + " mounted"
                    + (there.readOnly() != readOnly ? " (read-only: " + there.readOnly() + ")" : "")
                    + "; it is not this volume published this way");
        }
        Set<MountFlag> perMount = options.perMountFlags();
        if (readOnly) perMount.add(MountFlag.RDONLY);
        // flags set before the bind is attached, so that the copies propagation makes (host, pod) carry them too
        if (perMount.isEmpty()) Mounts.bind(source, target); else Mounts.bindWithFlags(source, target, perMount);
    }

    /**
     * Unmounts whatever is at {@code target} (a mount stacked twice by an earlier retry too) and
     * removes the empty directory or file we created there. OK when nothing is mounted.
     */
    public static void unmountAndRemove(Path target) {
        for (int i = 0; i < 8 && MountTable.read().isMountPoint(target); i++) {
            try {
                Mounts.unmount(target);
            } catch (OsException e) {
                if (e.is(Errno.EBUSY)) {
                    throw new StorageException(StorageException.Reason.BUSY, "unmounting " + target + ": busy; retry", e);
                }
                if (!e.is(Errno.EINVAL)) throw e; // EINVAL: unmounted meanwhile
            }
        }
        if (MountTable.read().isMountPoint(target)) {
            throw new StorageException(StorageException.Reason.FAILED, target + " is still a mount point after unmounting it 8 times");
        }
        removeIfEmpty(target);
    }

    /** Removes an empty directory or an empty file (a block publish target); leaves anything else. */
    static void removeIfEmpty(Path target) {
        try {
            switch (PoolLayout.type(target)) {
                case DIRECTORY -> Files.delete(target);
                case FILE -> {
                    if (Files.size(target) == 0) Files.delete(target);
                }
                default -> { }
            }
        } catch (DirectoryNotEmptyException | NoSuchFileException e) {
            // not ours to empty, or gone already
        } catch (IOException e) {
            throw new UncheckedIOException("removing " + target, e);
        }
    }

    /**
     * VOLUME_MOUNT_GROUP: the volume's root belongs to {@code gid}, group-writable and setgid, so a
     * non-root member of that group can write and new files stay in the group.
     */
    public static void grantGroup(Path root, int gid) {
        try {
            Files.setAttribute(root, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
            int mode = (Integer) Files.getAttribute(root, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            Files.setAttribute(root, "unix:mode", (mode & 07777) | 02070, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw new UncheckedIOException("granting group " + gid + " on " + root, e);
        }
    }

    public static Path canonical(Path path) {
        Path absolute = path.toAbsolutePath().normalize();
        try {
            return absolute.toRealPath();
        } catch (IOException e) {
            return absolute;
        }
    }
}
