package io.csi4j.driver.engine;

import java.util.List;

/** How a volume is staged: as a block device, or as a filesystem of a type with mount flags. */
public sealed interface StageOptions {

    /** Read-ahead to set on the attached device, 0 for the kernel's default. */
    long readAheadKiB();

    record Block(long readAheadKiB) implements StageOptions {}

    /** {@code fsType} empty means the engine's default (ext4); {@code readAheadKiB} 0 means the kernel's default. */
    record Mount(String fsType, List<String> mountFlags, long readAheadKiB) implements StageOptions {
        public Mount {
            mountFlags = List.copyOf(mountFlags);
        }
    }
}
