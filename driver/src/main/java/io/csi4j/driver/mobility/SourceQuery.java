package io.csi4j.driver.mobility;

import io.csi4j.driver.model.ContentSource;
import java.util.List;
import java.util.Optional;

/**
 * What a receiving node asks the source node for: a snapshot or a volume of it, and the snapshots the receiver holds
 * replicas of (a delta against one of them is enough). {@code readerNodeId} names the receiver in logs and progress.
 * {@code hashes}, when present, are the chunk digests of the receiver's replica of an old point of the same volume: a
 * snapshot source with none of the offered bases here is then sent by checksums against it, not whole.
 */
public record SourceQuery(ContentSource source, List<String> baseSnapshotIds, String readerNodeId, Optional<ChunkHashes> hashes) {
    public SourceQuery {
        baseSnapshotIds = List.copyOf(baseSnapshotIds);
    }

    public SourceQuery(ContentSource source, List<String> baseSnapshotIds, String readerNodeId) {
        this(source, baseSnapshotIds, readerNodeId, Optional.empty());
    }
}
