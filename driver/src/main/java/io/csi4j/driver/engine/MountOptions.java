package io.csi4j.driver.engine;

import io.csi4j.driver.storage.StorageException;
import io.csi4j.driver.os.MountFlag;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Mount flags from a volume capability ({@code ["noatime", "discard", "ro"]}), split the way
 * mount(8) splits them: generic ones become MS_* bits, the rest is the filesystem's data string.
 * Options that would change what gets mounted ({@code bind}, {@code remount} ...) are refused.
 */
public record MountOptions(Set<MountFlag> flags, List<String> data) {

    public MountOptions {
        flags = Collections.unmodifiableSet(flags.isEmpty() ? EnumSet.noneOf(MountFlag.class) : EnumSet.copyOf(flags));
        data = List.copyOf(data);
    }

    private static final Map<String, MountFlag> GENERIC = Map.ofEntries(
            Map.entry("ro", MountFlag.RDONLY),
            Map.entry("nosuid", MountFlag.NOSUID),
            Map.entry("nodev", MountFlag.NODEV),
            Map.entry("noexec", MountFlag.NOEXEC),
            Map.entry("sync", MountFlag.SYNCHRONOUS),
            Map.entry("dirsync", MountFlag.DIRSYNC),
            Map.entry("nosymfollow", MountFlag.NOSYMFOLLOW),
            Map.entry("noatime", MountFlag.NOATIME),
            Map.entry("nodiratime", MountFlag.NODIRATIME),
            Map.entry("relatime", MountFlag.RELATIME),
            Map.entry("strictatime", MountFlag.STRICTATIME),
            Map.entry("lazytime", MountFlag.LAZYTIME));

    /** The defaults mount(8) means by these; nothing to pass. */
    private static final Set<String> DEFAULTS = Set.of("defaults", "rw", "suid", "dev", "exec", "async", "atime", "diratime");

    private static final Set<String> REFUSED = Set.of("bind", "rbind", "remount", "move", "make-shared", "make-private",
            "make-slave", "make-unbindable", "loop", "x-mount.mkdir");

    /** Per-mount flags: the ones a bind mount can carry (others belong to the superblock). */
    static final Set<MountFlag> PER_MOUNT = EnumSet.of(MountFlag.RDONLY, MountFlag.NOSUID, MountFlag.NODEV,
            MountFlag.NOEXEC, MountFlag.NOSYMFOLLOW, MountFlag.NOATIME, MountFlag.NODIRATIME, MountFlag.RELATIME,
            MountFlag.STRICTATIME);

    public static MountOptions parse(List<String> options) {
        Set<MountFlag> flags = EnumSet.noneOf(MountFlag.class);
        List<String> data = new ArrayList<>();
        for (String raw : options) {
            // a capability may carry "a,b" in one entry, as fstab does
            for (String option : raw.split(",")) {
                String o = option.strip();
                if (o.isEmpty() || DEFAULTS.contains(o)) continue;
                if (o.indexOf('\0') >= 0 || o.length() > 256) throw StorageException.invalid("bad mount flag: " + o.replace("\0", "\\0"));
                if (REFUSED.contains(o) || REFUSED.contains(o.split("=", 2)[0])) {
                    throw StorageException.invalid("mount flag \"" + o + "\" is not allowed");
                }
                MountFlag flag = GENERIC.get(o);
                if (flag != null) flags.add(flag); else if (!data.contains(o)) data.add(o);
            }
        }
        return new MountOptions(flags, data);
    }

    public boolean readOnly() {
        return flags.contains(MountFlag.RDONLY);
    }

    /** The data argument of mount(2), null when empty. */
    String dataString() {
        return data.isEmpty() ? null : String.join(",", data);
    }

    Set<MountFlag> perMountFlags() {
        Set<MountFlag> perMount = EnumSet.noneOf(MountFlag.class);
        for (MountFlag f : flags) if (PER_MOUNT.contains(f)) perMount.add(f);
        return perMount;
    }
}
