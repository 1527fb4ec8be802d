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

    static long bits(Set<MountFlag> flags) {
        long bits = 0;
        for (MountFlag flag : flags) bits |= flag.bits;
        return bits;
    }
}
