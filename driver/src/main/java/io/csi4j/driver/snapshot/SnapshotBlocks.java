package io.csi4j.driver.snapshot;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.engine.SnapshotRanges;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.storage.StorageException;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;

/**
 * Changed block tracking: which ranges a snapshot holds, and which differ between two snapshots of one volume
 * (CSI SnapshotMetadata). Checks the request against the catalog (both snapshots exist and are ready, of the
 * same volume), then hands out the engine's cursor, which computes ranges as they are pulled.
 */
public final class SnapshotBlocks {
    /** Ranges per message when the caller leaves max_results 0. */
    public static final int DEFAULT_RANGES_PER_MESSAGE = 1024;
    /** Never more per message, whatever max_results says: a message stays small (~22 bytes a range). */
    public static final int MAX_RANGES_PER_MESSAGE = 4096;

    private final Snapshots snapshots;
    private final PoolStorage engine;
    private final Map<RangeCursor.Method, LongAdder> calls = new EnumMap<>(RangeCursor.Method.class);

    public SnapshotBlocks(Snapshots snapshots, PoolStorage engine) {
        this.snapshots = snapshots;
        this.engine = engine;
        for (RangeCursor.Method m : RangeCursor.Method.values()) calls.put(m, new LongAdder());
    }

    /** Whether this engine can answer at all (advertised as SNAPSHOT_METADATA_SERVICE only then). */
    public boolean available() {
        return engine.capability(SnapshotRanges.class).isPresent();
    }

    public RangeCursor allocated(String snapshotId, long startingOffset, BooleanSupplier cancelled) {
        checkOffset(startingOffset);
        snapshots.get(snapshotId);   // NOT_FOUND unless it exists and is ready
        return counted(ranges().allocatedRanges(snapshotId, startingOffset, cancelled));
    }

    public RangeCursor delta(String baseSnapshotId, String targetSnapshotId, long startingOffset, BooleanSupplier cancelled) {
        checkOffset(startingOffset);
        SnapshotRecord base = snapshots.get(baseSnapshotId);
        SnapshotRecord target = snapshots.get(targetSnapshotId);
        if (!base.sourceVolumeId().equals(target.sourceVolumeId())) {
            throw DomainException.invalid("snapshots " + baseSnapshotId + " (of volume " + base.sourceVolumeId()
                    + ") and " + targetSnapshotId + " (of volume " + target.sourceVolumeId()
                    + ") are of different volumes; a delta needs two snapshots of one volume");
        }
        return counted(ranges().changedRanges(baseSnapshotId, targetSnapshotId, startingOffset, cancelled));
    }

    private SnapshotRanges ranges() {
        return engine.capability(SnapshotRanges.class).orElseThrow(() ->
                StorageException.unsupported("the " + engine.name() + " engine keeps no block images of snapshots"));
    }

    /** How many ranges go into one message: 0 asks for our default; negative is invalid; more is capped. */
    public static int rangesPerMessage(int maxResults) {
        if (maxResults < 0) throw DomainException.invalid("max_results must not be negative: " + maxResults);
        return maxResults == 0 ? DEFAULT_RANGES_PER_MESSAGE : Math.min(maxResults, MAX_RANGES_PER_MESSAGE);
    }

    /** Calls answered so far, by how the ranges were found (a delta on a pool without reflink reads data). */
    public long calls(RangeCursor.Method method) {
        return calls.get(method).sum();
    }

    /** The counts in the Prometheus text format, for the plugin's metrics endpoint. */
    public String prometheusText() {
        StringBuilder out = new StringBuilder();
        out.append("# HELP csi4j_snapshot_metadata_calls_total SnapshotMetadata streams started, by how ranges are found.\n");
        out.append("# TYPE csi4j_snapshot_metadata_calls_total counter\n");
        calls.forEach((m, n) -> out.append("csi4j_snapshot_metadata_calls_total{method=\"")
                .append(m.name().toLowerCase()).append("\"} ").append(n.sum()).append('\n'));
        return out.toString();
    }

    private RangeCursor counted(RangeCursor cursor) {
        calls.get(cursor.method()).increment();
        return cursor;
    }

    private static void checkOffset(long startingOffset) {
        if (startingOffset < 0) throw DomainException.outOfRange("starting_offset must not be negative: " + startingOffset);
    }
}
