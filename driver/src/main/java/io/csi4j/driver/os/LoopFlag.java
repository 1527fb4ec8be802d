package io.csi4j.driver.os;

import java.util.Set;

/** Options of a loop device (loop_info64.lo_flags that LOOP_CONFIGURE accepts). */
public enum LoopFlag {
    READ_ONLY(1),
    /**
     * The kernel detaches the device on its last close. Right for filesystem volumes (the mount holds
     * the device); wrong for raw block volumes, which nothing holds open between uses.
     */
    AUTOCLEAR(4),
    /** The loop driver uses O_DIRECT on the backing file: no double page cache. */
    DIRECT_IO(16);

    final int bits;

    LoopFlag(int bits) {
        this.bits = bits;
    }

    static int bits(Set<LoopFlag> flags) {
        int bits = 0;
        for (LoopFlag flag : flags) bits |= flag.bits;
        return bits;
    }
}
