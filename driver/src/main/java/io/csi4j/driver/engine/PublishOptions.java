package io.csi4j.driver.engine;

import java.util.List;
import java.util.OptionalInt;

/**
 * How a staged volume is published: read-only or not, extra mount flags, and the group that
 * must be able to write it (VOLUME_MOUNT_GROUP / fsGroup).
 */
public record PublishOptions(boolean block, boolean readOnly, List<String> mountFlags, OptionalInt volumeMountGroup) {
    public PublishOptions {
        mountFlags = List.copyOf(mountFlags);
    }
}
