package io.csi4j.driver.volume;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.model.VolumeKind;
import io.csi4j.driver.model.VolumeRecord;
import java.util.List;

/**
 * What a volume is: a raw block device ({@code fsType} null), or a filesystem of a type. One shape from the
 * request, checked against the engine's capabilities before anything is written, to the row, the engine's
 * {@link AccessType} and the node's stage.
 */
public record VolumeShape(VolumeKind kind, String fsType) {
    /** What a filesystem volume without an fs_type is (and records): the image engine formats it so. */
    public static final String DEFAULT_FS_TYPE = AccessType.DEFAULT_FS_TYPE;

    /**
     * The one shape these capabilities ask for; INVALID_ARGUMENT for a mix, a multi-node mode, or what the
     * engine cannot make (block access, an fs_type outside its filesystems).
     */
    public static VolumeShape requested(List<Capability> capabilities, PoolStorage engine) {
        if (capabilities.isEmpty()) throw DomainException.invalid("volume_capabilities is REQUIRED");
        VolumeKind kind = null;
        String fsType = null;
        for (Capability c : capabilities) {
            if (c.mode().multiNode()) {
                throw DomainException.invalid("access mode " + c.mode() + " is not supported: volumes of "
                        + DriverConfig.PLUGIN_NAME + " live on one node");
            }
            if (kind != null && kind != c.kind()) {
                throw DomainException.invalid("volume_capabilities mix block and mount access; a volume is one or the other");
            }
            kind = c.kind();
            if (kind == VolumeKind.BLOCK && !engine.supportsBlock()) {
                throw DomainException.invalid("block access is not supported by the " + engine.name() + " engine");
            }
            if (kind == VolumeKind.FILESYSTEM && !c.fsType().isEmpty()) {
                List<String> filesystems = engine.capabilities().filesystems();   // empty: the engine formats nothing
                if (!filesystems.isEmpty() && !filesystems.contains(c.fsType())) {
                    throw DomainException.invalid("fs_type '" + c.fsType() + "' is not supported; use one of " + filesystems);
                }
                if (fsType != null && !fsType.equals(c.fsType())) {
                    throw DomainException.invalid("volume_capabilities ask for two fs types: " + fsType + " and " + c.fsType());
                }
                fsType = c.fsType();
            }
        }
        if (kind == VolumeKind.BLOCK) return new VolumeShape(kind, null);
        return new VolumeShape(kind, fsType == null ? DEFAULT_FS_TYPE : fsType);
    }

    /** How the engine makes a volume of this shape. */
    public AccessType access() {
        return kind == VolumeKind.BLOCK ? AccessType.BLOCK : AccessType.mount(fsType);
    }

    /** How the engine makes this recorded volume: a block device, or a filesystem of its fs_type. */
    public static AccessType accessOf(VolumeRecord v) {
        return v.kind() == VolumeKind.BLOCK ? AccessType.BLOCK : AccessType.mount(fsTypeOf(v));
    }

    /** A recorded volume's filesystem: its fs_type, or the default when it has none. */
    public static String fsTypeOf(VolumeRecord v) {
        return v.fsType() == null ? DEFAULT_FS_TYPE : v.fsType();
    }
}
