package io.csi4j.driver.model;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** The volume_context every volume carries: how it is consumed and its filesystem, so a node can check them. */
public final class VolumeContext {
    public static final String KIND = "csi4j.io/kind";
    public static final String FS_TYPE = "csi4j.io/fs-type";

    private VolumeContext() {}

    /** The contexts of the usual shapes, made once: a ListVolumes page asks for one per entry. */
    private static final Map<String, Map<String, String>> FILESYSTEMS = Map.of(
            "ext4", make(VolumeKind.FILESYSTEM, "ext4"), "xfs", make(VolumeKind.FILESYSTEM, "xfs"));
    private static final Map<String, String> BLOCK = make(VolumeKind.BLOCK, null);

    /** In a fixed order (kind, then fs type), as the wire has always shown it. */
    public static Map<String, String> of(VolumeKind kind, String fsType) {
        if (kind == VolumeKind.BLOCK && fsType == null) return BLOCK;
        if (kind == VolumeKind.FILESYSTEM && fsType != null) {
            Map<String, String> usual = FILESYSTEMS.get(fsType);
            if (usual != null) return usual;
        }
        return make(kind, fsType);
    }

    private static Map<String, String> make(VolumeKind kind, String fsType) {
        var context = new LinkedHashMap<String, String>(4);
        context.put(KIND, kind == VolumeKind.BLOCK ? "block" : "filesystem");
        if (fsType != null) context.put(FS_TYPE, fsType);
        return Collections.unmodifiableMap(context);
    }
}
