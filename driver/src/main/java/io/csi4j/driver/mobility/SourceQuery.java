package io.csi4j.driver.mobility;

import io.csi4j.driver.model.ContentSource;
import java.util.List;

/**
 * What a receiving node asks the source node for: a snapshot or a volume of it, and the snapshots the receiver holds
 * replicas of (a delta against one of them is enough). {@code readerNodeId} names the receiver in logs and progress.
 */
public record SourceQuery(ContentSource source, List<String> baseSnapshotIds, String readerNodeId) {
    public SourceQuery {
        baseSnapshotIds = List.copyOf(baseSnapshotIds);
    }
}
