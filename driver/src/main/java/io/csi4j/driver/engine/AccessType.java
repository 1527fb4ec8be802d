package io.csi4j.driver.engine;

/**
 * What a volume is used as, from its capability: a raw block device, or a filesystem of a type.
 * Known at creation so the engine can refuse what it cannot do (block volumes on {@code dir}, an
 * unsupported filesystem) before any bytes exist, and record it next to the artifact.
 */
public sealed interface AccessType {

    /** The name in the artifact's sidecar: {@code block} or {@code mount}. */
    String kind();

    record Block() implements AccessType {
        @Override
        public String kind() { return "block"; }
    }

    /** {@code fsType} empty means the engine's default (ext4 on {@code image}). */
    record Mount(String fsType) implements AccessType {
        public Mount {
            fsType = fsType == null ? "" : fsType;
        }

        @Override
        public String kind() { return "mount"; }
    }

    AccessType BLOCK = new Block();

    /** What a filesystem volume without an fs_type is, and is recorded as: the one place this default is written. */
    String DEFAULT_FS_TYPE = "ext4";

    static AccessType mount(String fsType) {
        return new Mount(fsType);
    }
}
