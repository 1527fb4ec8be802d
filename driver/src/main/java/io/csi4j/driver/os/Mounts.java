package io.csi4j.driver.os;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;

/** mount(2) and umount2(2). Check what is mounted with {@link MountTable}, never with memory. */
public final class Mounts {
    private Mounts() {}

    /** mount(2); {@code data} is the filesystem-specific option string, may be null. */
    public static void mount(String source, Path target, String fsType, Set<MountFlag> flags, String data) {
        Libc.mount(source, target.toString(), fsType, MountFlag.bits(flags), data, source + " -> " + target, target);
    }

    public static void bind(Path source, Path target) {
        mount(source.toString(), target, null, EnumSet.of(MountFlag.BIND), null);
    }

    /**
     * A bind of {@code source} at {@code target} whose per-mount flags (read-only, nosuid, noexec, atime ...) are set
     * before it is attached: open_tree(OPEN_TREE_CLONE), mount_setattr, move_mount. Every copy that propagation makes
     * of it (a publish under a shared kubelet directory reaches the host's and the pod's view) carries the flags; a
     * bind followed by a remount changes only the one mount, and leaves the propagated copies writable. Kernels
     * without these calls (before 5.12): bind, then remount.
     */
    public static void bindWithFlags(Path source, Path target, Set<MountFlag> flags) {
        long[] attr = MountFlag.mountAttr(flags);
        int fd;
        try {
            fd = Libc.openTreeClone(source);
        } catch (OsException e) {
            if (!e.is(Errno.ENOSYS)) throw e;
            bindThenRemount(source, target, flags);
            return;
        }
        try {
            if (attr[0] != 0 || attr[1] != 0) Libc.mountSetattr(fd, attr[0], attr[1], source);
            Libc.moveMount(fd, target);
        } finally {
            Libc.close(fd);
        }
    }

    private static void bindThenRemount(Path source, Path target, Set<MountFlag> flags) {
        bind(source, target);
        try {
            remountBind(target, flags);
        } catch (RuntimeException e) {
            try {
                unmount(target, UnmountFlag.DETACH);
            } catch (RuntimeException undo) {
                e.addSuppressed(undo);
            }
            throw e;
        }
    }

    /** A bind that is read-only from the first instant anyone can see it, in every propagated copy too. */
    public static void bindReadOnly(Path source, Path target) {
        bindWithFlags(source, target, EnumSet.of(MountFlag.RDONLY));
    }

    /** The bind-then-remount way, kept for its tests and for kernels without the new mount API. */
    static void bindReadOnlyByRemount(Path source, Path target) {
        bindThenRemount(source, target, EnumSet.of(MountFlag.RDONLY));
    }

    /**
     * Makes one mount (not the filesystem) read-only: MS_REMOUNT|MS_BIND|MS_RDONLY. The kernel resets
     * per-mount flags left out of a remount, and refuses to clear locked ones (nosuid, nodev ... in a
     * user namespace), so the mount's current flags are carried over from the mount table.
     */
    public static void remountBindReadOnly(Path target) {
        remountBind(target, EnumSet.of(MountFlag.RDONLY));
    }

    /** MS_REMOUNT|MS_BIND with {@code wanted} plus the mount's current per-mount flags; an atime choice asked for replaces the current one. */
    private static void remountBind(Path target, Set<MountFlag> wanted) {
        Set<MountFlag> flags = EnumSet.of(MountFlag.REMOUNT, MountFlag.BIND);
        flags.addAll(wanted);
        boolean atimeAsked = wanted.stream().anyMatch(Mounts::isAtime);
        MountTable.read().at(target).ifPresent(current -> {
            for (MountFlag f : perMountFlags(current)) if (!(atimeAsked && isAtime(f))) flags.add(f);
        });
        mount(null, target, null, flags, null);
    }

    private static boolean isAtime(MountFlag f) {
        return f == MountFlag.NOATIME || f == MountFlag.RELATIME || f == MountFlag.STRICTATIME;
    }

    static Set<MountFlag> perMountFlags(MountInfo mount) {
        Set<MountFlag> flags = EnumSet.noneOf(MountFlag.class);
        boolean relatime = false;
        boolean noatime = false;
        for (String option : mount.mountOptions()) {
            switch (option) {
                case "nosuid" -> flags.add(MountFlag.NOSUID);
                case "nodev" -> flags.add(MountFlag.NODEV);
                case "noexec" -> flags.add(MountFlag.NOEXEC);
                case "nosymfollow" -> flags.add(MountFlag.NOSYMFOLLOW);
                case "nodiratime" -> flags.add(MountFlag.NODIRATIME);
                case "noatime" -> noatime = true;
                case "relatime" -> relatime = true;
                default -> { }
            }
        }
        // mountinfo shows relatime or noatime; neither means strictatime
        flags.add(noatime ? MountFlag.NOATIME : relatime ? MountFlag.RELATIME : MountFlag.STRICTATIME);
        return flags;
    }

    /** mount(NULL, target, NULL, MS_PRIVATE|..., NULL), optionally for the whole subtree (MS_REC). */
    public static void setPropagation(Path target, Propagation propagation, boolean recursive) {
        long flags = propagation.bits | (recursive ? MountFlag.REC.bits : 0);
        Libc.mount(null, target.toString(), null, flags, null, target.toString(), target);
    }

    /** umount2(2). Unmounting something that is not a mount point fails with EINVAL. */
    public static void unmount(Path target, UnmountFlag... flags) {
        int bits = 0;
        for (UnmountFlag flag : flags) bits |= flag.bits;
        Libc.umount2(target, bits);
    }
}
