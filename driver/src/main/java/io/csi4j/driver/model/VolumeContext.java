package io.csi4j.driver.model;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** The volume_context every volume carries: how it is consumed and its filesystem, so a node can check them. */
public final class VolumeContext {
    public static final String KIND = "csi4j.io/kind";
    public static final String FS_TYPE = "csi4j.io/fs-type";

    private VolumeContext() {}

    /** In a fixed order (kind, then fs type), as the wire has always shown it. */
    public static Map<String, String> of(VolumeKind kind, String fsType) {
        var context = new LinkedHashMap<String, String>(4);
        context.put(KIND, kind == VolumeKind.BLOCK ? "block" : "filesystem");
        if (fsType != null) context.put(FS_TYPE, fsType);
        return Collections.unmodifiableMap(context);
    }
}
