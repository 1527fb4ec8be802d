package io.csi4j.driver.engine;

import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What volumes an engine makes, so that the domain refuses what it cannot before any row or artifact is
 * written: block volumes or not, the filesystems of mount volumes (its default first; empty when it formats
 * nothing and any fs_type is only recorded) and the mutable parameters it applies ({@link MutableParameters}
 * holds their ranges). The smallest volume it makes is {@link PoolStorage#blankSize}.
 */
public record EngineCapabilities(boolean block, List<String> filesystems, Set<String> mutableKeys) {
    public EngineCapabilities {
        filesystems = List.copyOf(filesystems);
        mutableKeys = Set.copyOf(mutableKeys);
        Objects.requireNonNull(filesystems);
    }
}
