package io.csi4j.driver.engine;

import java.util.function.BooleanSupplier;

/**
 * Capability: snapshots are block images whose ranges can be mapped (CSI SnapshotMetadata, and the deltas a node
 * sends to another). An engine without it serves no SnapshotMetadata and sends whole volumes.
 */
public interface SnapshotRanges extends Capability {

    /**
     * The allocated ranges of the snapshot's block image from {@code from} on, computed as they are pulled; the
     * caller closes the cursor. NOT_FOUND without its image; OUT_OF_RANGE for {@code from} beyond its size.
     * {@code cancelled} is polled while scanning: a true answer ends the scan with a CancellationException.
     * Reads only: nothing in the pool changes.
     */
    RangeCursor allocatedRanges(String snapshotId, long from, BooleanSupplier cancelled);

    /**
     * The ranges whose content may differ between two snapshots of one volume, from {@code from} on, up to the
     * target's size: from shared physical extents where the pool reflinks, else by comparing data (the cursor says
     * which, {@link RangeCursor#method}). Errors as {@link #allocatedRanges}. Reads only.
     */
    RangeCursor changedRanges(String baseSnapshotId, String targetSnapshotId, long from, BooleanSupplier cancelled);

    /**
     * As {@link #changedRanges}, from this pool's replica {@code base} (a copy of another node's snapshot of the same
     * volume, kept by {@link DataMover}) to one of its own snapshots: what a new primary sends the copy it was handed
     * over from, which holds that same snapshot (docs/replication.md, "Handoff"). NOT_FOUND without the replica.
     */
    RangeCursor changedRangesFromReplica(Replica base, String targetSnapshotId, long from, BooleanSupplier cancelled);
}
