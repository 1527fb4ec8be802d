package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.image.ImageFormat.fileSize;

import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.os.ExtentFile;
import io.csi4j.driver.os.Reflink;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The first pass of an {@link IncrementalCut}, before the freeze, while the workload writes the image: the ranges where
 * the live image's extents differ from the base's are cloned from the image into the new point's temporary file (a
 * reflink of the base), so that the freeze has only what changed since to clone. Then the temporary file's extents are
 * read (no one writes it until the freeze) and compared with the base's: what the file differs from the base in, the
 * first pass's part of the cut's delta.
 * <p>The walk of a live image needs no consistency: a range cloned from it holds what the image held at that call
 * (FICLONERANGE locks both files), and the freeze compares the image with the file as it is afterwards.
 */
final class CutPrePass {
    /**
     * The temporary file's extents after the pass (null: more than {@code maxExtents}), the ranges where it differs from
     * the base (null: past {@link CutDeltas#MAX_RANGES}), how the pass went, and its time.
     */
    record Done(List<ExtentFile.Extent> tempExtents, List<RangeCursor.Range> changedSinceBase, MergedClones.Done cloned,
                long readNanos, long totalNanos) {
        String summary() {
            return String.format("before the freeze %.1f ms: %s; the new point's extents read and compared in %.1f ms",
                    totalNanos / 1e6, cloned.summary(), readNanos / 1e6);
        }
    }

    private CutPrePass() {
    }

    /**
     * Clones into {@code temp} (a reflink of the base, whose extents are {@code baseExtents}) what {@code image} differs
     * from the base in now; null when the sizes differ. Throws on any error: {@code temp} is then anything.
     */
    static Done run(Path image, Path temp, List<ExtentFile.Extent> baseExtents, int maxExtents) {
        long t0 = System.nanoTime();
        MergedClones.Done cloned;
        try (ExtentFile imageExtents = ExtentFile.open(image);
             Reflink.Ranges target = Reflink.ranges(image, temp)) {
            long size = fileSize(temp);
            if (imageExtents.size() != size) return null;
            cloned = MergedClones.apply(new SharedExtentDelta(baseExtents, imageExtents, 0, () -> false), target);
        }
        long t1 = System.nanoTime();
        // nothing cloned (the volume idle since the base): the file is the base's reflink untouched, the base's blocks at
        // every offset, so the base's extents are its own and it differs from the base nowhere; no second walk
        if (cloned.calls() == 0) return new Done(baseExtents, List.of(), cloned, 0, t1 - t0);
        List<ExtentFile.Extent> tempExtents;
        long size;
        try (ExtentFile f = ExtentFile.open(temp)) {
            size = f.size();
            tempExtents = SharedExtentDelta.allExtents(f, maxExtents);
        }
        List<RangeCursor.Range> changed = null;
        if (tempExtents != null) {
            changed = new ArrayList<>();
            try (SharedExtentDelta sinceBase = SharedExtentDelta.between(baseExtents, tempExtents, size)) {
                for (RangeCursor.Range r = sinceBase.next(); r != null && changed != null; r = sinceBase.next()) {
                    if (changed.size() < CutDeltas.MAX_RANGES) changed.add(r); else changed = null;
                }
            }
        }
        long t2 = System.nanoTime();
        return new Done(tempExtents, changed, cloned, t2 - t1, t2 - t0);
    }
}
