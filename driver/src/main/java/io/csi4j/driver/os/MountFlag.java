package io.csi4j.driver.os;

import java.util.Set;

/** mount(2) flags (MS_*) other than the propagation ones, which are {@link Propagation}. */
public enum MountFlag {
    RDONLY(1),
    NOSUID(2),
    NODEV(4),
    NOEXEC(8),
    SYNCHRONOUS(16),
    REMOUNT(32),
    DIRSYNC(128),
    NOSYMFOLLOW(256),
    NOATIME(1024),
    NODIRATIME(2048),
    BIND(4096),
    MOVE(8192),
    REC(16384),
    SILENT(32768),
    RELATIME(1 << 21),
    STRICTATIME(1 << 24),
    LAZYTIME(1 << 25);

    final long bits;

    MountFlag(long bits) {
        this.bits = bits;
    }

    /**
     * The per-mount flags as mount_setattr(2) takes them: {attr_set, attr_clr}. Only per-mount flags have a MOUNT_ATTR_*
     * (an atime choice clears the atime bits first); others (REMOUNT, BIND, LAZYTIME ...) are refused.
     */
    static long[] mountAttr(Set<MountFlag> flags) {
        long set = 0, clear = 0;
        for (MountFlag flag : flags) {
            switch (flag) {
                case RDONLY -> set |= 0x1;
                case NOSUID -> set |= 0x2;
                case NODEV -> set |= 0x4;
                case NOEXEC -> set |= 0x8;
                case NODIRATIME -> set |= 0x80;
                case NOSYMFOLLOW -> set |= 0x200000;
                case RELATIME -> clear |= 0x70;
                case NOATIME -> { clear |= 0x70; set |= 0x10; }
                case STRICTATIME -> { clear |= 0x70; set |= 0x20; }
                default -> throw new IllegalArgumentException(flag + " is not a per-mount flag");
            }
        }
        return new long[] {set, clear};
    }

    static long bits(Set<MountFlag> flags) {
        long bits = 0;
        for (MountFlag flag : flags) bits |= flag.bits;
        return bits;
    }
}
