package io.csi4j.driver.os;

/** umount2(2) flags. */
public enum UnmountFlag {
    FORCE(1),
    /** Lazy: detach now, clean up when no longer busy. */
    DETACH(2),
    EXPIRE(4),
    NOFOLLOW(8);

    final int bits;

    UnmountFlag(int bits) {
        this.bits = bits;
    }
}
