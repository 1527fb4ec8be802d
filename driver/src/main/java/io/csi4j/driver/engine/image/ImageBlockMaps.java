package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.EngineErrors.translate;

import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.engine.PoolLayout.EntryType;
import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.engine.SnapshotRanges;
import io.csi4j.driver.os.ExtentFile;
import io.csi4j.driver.storage.StorageException;
import java.nio.file.Path;
import java.util.function.BooleanSupplier;

/** What a snapshot's image holds and what changed between two ({@link SnapshotRanges}), from extents or data. */
final class ImageBlockMaps implements SnapshotRanges {
    private final ImagePool images;
    private final CutDeltas deltas;

    ImageBlockMaps(ImagePool images, CutDeltas deltas) {
        this.images = images;
        this.deltas = deltas;
    }

    @Override
    public RangeCursor allocatedRanges(String snapshotId, long from, BooleanSupplier cancelled) {
        ExtentFile image = openSnapshot(snapshotId);
        try {
            checkOffset(from, image.size());
            return new AllocatedRanges(image, from, cancelled);
        } catch (RuntimeException e) {
            image.close();
            throw e;
        }
    }

    /**
     * From physical extents where the pool reflinks (every snapshot of a volume was cut by FICLONE of its one
     * image), else by comparing data; the cursor says which ({@link RangeCursor#method}).
     */
    @Override
    public RangeCursor changedRanges(String baseSnapshotId, String targetSnapshotId, long from, BooleanSupplier cancelled) {
        // the incremental cut that made target from base found the ranges already (CutDeltas): no walk of both maps
        var cut = deltas.between(baseSnapshotId, targetSnapshotId);
        if (cut.isPresent()) {
            openSnapshot(baseSnapshotId).close();                           // both still here: NOT_FOUND as below otherwise
            openSnapshot(targetSnapshotId).close();
            checkOffset(from, cut.get().sizeBytes());
            return CutDeltas.cursor(cut.get(), from);
        }
        return delta(openSnapshot(baseSnapshotId), targetSnapshotId, from, cancelled);
    }

    private RangeCursor delta(ExtentFile base, String targetSnapshotId, long from, BooleanSupplier cancelled) {
        ExtentFile target = null;
        try {
            target = openSnapshot(targetSnapshotId);
            checkOffset(from, target.size());
            ExtentFile t = target;
            boolean shared = images.pool().reflink() && translate("mapping " + t.path(), () -> base.mapsExtents() && t.mapsExtents());
            return shared ? new SharedExtentDelta(base, target, from, cancelled)
                    : new DataComparisonDelta(base, target, from, translate("reading " + images.pool().path(),
                            () -> Math.max(512, t.blockSize())), cancelled);
        } catch (RuntimeException e) {
            base.close();
            if (target != null) target.close();
            throw e;
        }
    }

    /** As {@link #changedRanges}: the replica is a reflink of the image it was built as, so extents are shared too. */
    @Override
    public RangeCursor changedRangesFromReplica(Replica base, String targetSnapshotId, long from, BooleanSupplier cancelled) {
        ExtentFile baseFile = translate("opening replica " + base, () -> {
            Path path = images.layout().replica(base.sourceVolumeId(), base.snapshotId());
            if (PoolLayout.type(path) != EntryType.FILE) throw StorageException.notFound("replica " + base + " is not in the pool");
            return ExtentFile.open(path);
        });
        return delta(baseFile, targetSnapshotId, from, cancelled);
    }

    private ExtentFile openSnapshot(String snapshotId) {
        PoolLayout.checkId("snapshot", snapshotId);
        return translate("opening snapshot " + snapshotId, () -> {
            if (!images.layout().exists(Artifact.Kind.SNAPSHOT, snapshotId, EntryType.FILE)) {
                throw StorageException.notFound("snapshot " + snapshotId + " has no image in the pool");
            }
            return ExtentFile.open(images.snapshotImage(snapshotId));
        });
    }

    /** A resume offset may be the capacity itself (everything was sent), not beyond it. */
    private static void checkOffset(long from, long capacity) {
        if (from < 0 || from > capacity) {
            throw StorageException.outOfRange("starting_offset " + from + " is outside the snapshot's volume of "
                    + capacity + " bytes");
        }
    }
}
