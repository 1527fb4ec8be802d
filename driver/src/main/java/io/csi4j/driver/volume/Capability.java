package io.csi4j.driver.volume;

import io.csi4j.driver.model.VolumeKind;
import java.util.List;

/** One requested volume capability: access mode, block or mount (with fs type, flags and mount group). */
public record Capability(AccessMode mode, VolumeKind kind, String fsType, List<String> mountFlags, String mountGroup) {
    public Capability {
        fsType = fsType == null ? "" : fsType;
        mountFlags = List.copyOf(mountFlags);
        mountGroup = mountGroup == null ? "" : mountGroup;
    }

    public static Capability block(AccessMode mode) {
        return new Capability(mode, VolumeKind.BLOCK, "", List.of(), "");
    }

    public static Capability mount(AccessMode mode, String fsType) {
        return new Capability(mode, VolumeKind.FILESYSTEM, fsType, List.of(), "");
    }
}
