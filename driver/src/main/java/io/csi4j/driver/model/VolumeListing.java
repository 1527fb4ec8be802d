package io.csi4j.driver.model;

import java.util.Objects;
import java.util.Map;

/**
 * What a listing of volumes shows of each (ListVolumes): the columns a page reads and nothing more. A page
 * holds up to thousands of rows, and every column read is a native call and a string or two.
 */
public record VolumeListing(String id, long capacityBytes, VolumeKind kind, String fsType, ContentSource source,
                            String nodeId, State state) {
    public VolumeListing {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(state, "state");
    }

    /** The volume_context the wire shows of this volume. */
    public Map<String, String> context() {
        return VolumeContext.of(kind, fsType);
    }
}
