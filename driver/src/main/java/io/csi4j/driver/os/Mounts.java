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
     * Bind mount that is read-only from the first instant anyone can see it matter: a bind cannot be
     * made read-only in one call, so bind, then remount read-only, and undo the bind if that fails.
     */
    public static void bindReadOnly(Path source, Path target) {
        bind(source, target);
        try {
            remountBindReadOnly(target);
        } catch (RuntimeException e) {
            try {
                unmount(target, UnmountFlag.DETACH);
            } catch (RuntimeException undo) {
                e.addSuppressed(undo);
            }
            throw e;
        }
    }

    /**
     * Makes one mount (not the filesystem) read-only: MS_REMOUNT|MS_BIND|MS_RDONLY. The kernel resets
     * per-mount flags left out of a remount, and refuses to clear locked ones (nosuid, nodev ... in a
     * user namespace), so the mount's current flags are carried over from the mount table.
     */
    public static void remountBindReadOnly(Path target) {
        Set<MountFlag> flags = EnumSet.of(MountFlag.REMOUNT, MountFlag.BIND, MountFlag.RDONLY);
        MountTable.read().at(target).ifPresent(current -> flags.addAll(perMountFlags(current)));
        mount(null, target, null, flags, null);
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
