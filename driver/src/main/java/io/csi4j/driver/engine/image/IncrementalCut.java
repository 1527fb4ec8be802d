package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.image.ImageFormat.fileSize;

import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.os.ExtentFile;
import io.csi4j.driver.os.Reflink;
import io.csi4j.driver.os.ZeroFill;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A replication point cut as the point its secondary holds (the base, P) plus what changed since, instead of a whole
 * clone of the image: a clone's cost follows the image's extent count, which copy-on-write after every point multiplies,
 * and a staged volume's writes wait for it (docs/data-path.md, section 7). The rule:
 * <ul>
 *   <li>Before the freeze, when the pool is a reflink XFS and P is a snapshot of this volume of the image's size: the new
 *       point's temporary file is a reflink of P, and P's extents are read (P is immutable: no workload waits
 *       for either).</li>
 *   <li>Inside the freeze, only when the freezer froze the volume whole (every loop device of its image a mounted
 *       filesystem, so nothing writes the image until the thaw; a block volume's writer is never stopped and would
 *       tear a range-wise copy) and the sizes still match: the ranges where the image's extents differ from P's
 *       ({@link SharedExtentDelta}: a range whose physical extents are shared holds the same bytes, as a shared extent
 *       is never written in place; a range it does not report reads the same in both, holes and unwritten extents
 *       as zeros) are made the image's by FICLONERANGE from the image, which also makes a hole (or unwritten extent) of
 *       the image a hole of the new file (XFS unmaps the destination and maps only written source extents; other
 *       pools, unproven, take the whole clone): one call per range, no SEEK_DATA or punch per range
 *       (each a syscall as dear as the clone itself).</li>
 *   <li>Any other case, and any error on the way, is the whole clone of today, inside the same freeze, over the same
 *       temporary file (FICLONE truncates it first).</li>
 * </ul>
 * Everything after the thaw is as for a whole clone: the file is synced and renamed by the reveal; a crash before
 * leaves a {@code .tmp} leftover that the start-up sweep removes.
 */
final class IncrementalCut {
    private static final Logger LOG = Logger.getLogger(IncrementalCut.class.getName());

    /**
     * Changed ranges at most this far apart are cloned in one call: a FICLONERANGE costs about what remapping a few
     * extents does (measured: IncrementalCutBench), and a gap re-cloned maps the blocks it maps already (the same bytes).
     */
    static final long MERGE_GAP = 64 * 1024;

    /** P's extents are read before the freeze up to this many (some 50 MB); beyond, walked inside it as the image's are. */
    static final int MAX_READ_BEFORE = 1 << 20;

    private final Path image;
    private final Path temp;
    private final Path base;          // null: no incremental cut (whyNot says why)
    private final String baseId;
    private final List<ExtentFile.Extent> baseExtents;   // P's, read before the freeze; null: walked inside it
    private String whyNot;
    /** The ranges found changed, once applied (null otherwise, or past {@link CutDeltas#MAX_RANGES}). */
    private List<RangeCursor.Range> applied;

    private IncrementalCut(Path image, Path temp, Path base, String baseId, List<ExtentFile.Extent> baseExtents, String whyNot) {
        this.image = image;
        this.baseExtents = baseExtents;
        this.temp = temp;
        this.base = base;
        this.baseId = baseId;
        this.whyNot = whyNot;
    }

    /** A cut of a volume with no base: whole. */
    static IncrementalCut whole(ImagePool images, String volumeId, Path temp, String why) {
        return new IncrementalCut(images.image(volumeId), temp, null, "", null, why);
    }

    /** Before the freeze: {@code temp} a reflink of the base when the rule lets this cut be incremental. */
    static IncrementalCut prepare(ImagePool images, String volumeId, String baseSnapshotId, Path temp) {
        Path image = images.image(volumeId);
        if (baseSnapshotId.isEmpty()) return whole(images, volumeId, temp, "no base");
        // proven (IncrementalCutTest) on XFS, whose FICLONERANGE of a source hole leaves a hole: elsewhere a whole clone
        if (!images.pool().reflink() || !"xfs".equals(images.pool().filesystem())) {
            return whole(images, volumeId, temp, "the pool is not a reflink XFS");
        }
        try {
            Path base = images.snapshotImage(baseSnapshotId);
            if (!Files.isRegularFile(base)) return whole(images, volumeId, temp, "base " + baseSnapshotId + " is not a snapshot here");
            Optional<String> source = images.layout().readSidecar(Artifact.Kind.SNAPSHOT, baseSnapshotId).map(Artifact::source);
            if (!source.equals(Optional.of(Artifact.volumeSource(volumeId)))) {
                return whole(images, volumeId, temp, "base " + baseSnapshotId + " is not a snapshot of " + volumeId);
            }
            long baseSize = fileSize(base);
            long imageSize = fileSize(image);
            if (baseSize != imageSize) {
                return whole(images, volumeId, temp, "base " + baseSnapshotId + " holds " + baseSize + " bytes, the image " + imageSize);
            }
            Reflink.clone(base, temp);
            // P is immutable: its extents read now, so that only the image's are walked inside the freeze
            List<ExtentFile.Extent> baseExtents;
            try (ExtentFile f = ExtentFile.open(base)) {
                baseExtents = SharedExtentDelta.allExtents(f, MAX_READ_BEFORE);
            }
            return new IncrementalCut(image, temp, base, baseSnapshotId, baseExtents, null);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "preparing an incremental cut of " + volumeId + " since " + baseSnapshotId + "; cutting it whole", e);
            return whole(images, volumeId, temp, "preparing failed: " + e.getMessage());
        }
    }

    /**
     * Inside the freeze: {@code temp} made what the image holds now, incrementally when {@code frozenWhole} and the rule
     * holds, else by {@code wholeClone}; returns how, for the cut's log line.
     */
    String cut(boolean frozenWhole, Runnable wholeClone) {
        if (base != null && !frozenWhole) whyNot = "not a frozen filesystem (a block volume, or not staged)";
        if (whyNot == null) {
            String done = applyDelta();
            if (done != null) return done;
        }
        wholeClone.run();
        return "whole clone (" + whyNot + ")";
    }

    /** After {@link #cut}: what the new point differs from its base in, when it was cut incrementally. */
    java.util.Optional<CutDeltas.Delta> delta(String snapshotId, long sizeBytes) {
        return applied == null ? java.util.Optional.empty()
                : java.util.Optional.of(new CutDeltas.Delta(baseId, snapshotId, sizeBytes, List.copyOf(applied)));
    }

    /** The changed ranges applied to temp; null (whyNot set) when anything failed: temp is then anything. */
    private String applyDelta() {
        long calls = 0;
        long ranges = 0;
        long bytes = 0;
        try (ExtentFile baseFile = baseExtents == null ? ExtentFile.open(base) : null;
             ExtentFile imageExtents = ExtentFile.open(image);
             Reflink.Ranges target = Reflink.ranges(image, temp)) {
            if (imageExtents.size() != fileSize(temp)) {
                whyNot = "the image was resized since the base was reflinked";
                return null;
            }
            var delta = baseExtents != null ? new SharedExtentDelta(baseExtents, imageExtents, 0, () -> false)
                    : new SharedExtentDelta(baseFile, imageExtents, 0, () -> false);              // closed with the files above
            long comparing = 0;
            long applying = 0;
            long from = -1;
            long end = -1;
            List<RangeCursor.Range> found = new java.util.ArrayList<>();
            while (true) {
                long t0 = System.nanoTime();
                RangeCursor.Range r = delta.next();
                long t1 = System.nanoTime();
                comparing += t1 - t0;
                if (r != null) {
                    ranges++;
                    bytes += r.length();
                    if (found != null && found.size() < CutDeltas.MAX_RANGES) found.add(r); else found = null;
                }
                // a call costs more than remapping a few unchanged extents again: ranges close together go as one
                if (r != null && from >= 0 && r.offset() - end <= MERGE_GAP) {
                    end = r.offset() + r.length();
                    continue;
                }
                if (from >= 0) {
                    target.clone(from, end - from);
                    calls++;
                }
                applying += System.nanoTime() - t1;
                if (r == null) break;
                from = r.offset();
                end = r.offset() + r.length();
            }
            if (ZeroFill.fresh(image)) ZeroFill.mark(temp);
            applied = found;
            return String.format("incremental since %s: %d ranges, %d bytes changed, %d FICLONERANGE calls (extents compared in"
                    + " %.1f ms, ranges cloned in %.1f ms)", baseId, ranges, bytes, calls, comparing / 1e6, applying / 1e6);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "incremental cut of " + image + " since " + baseId + " failed after " + calls + " calls; cutting it whole", e);
            whyNot = "incremental failed: " + e.getMessage();
            return null;
        }
    }
}
