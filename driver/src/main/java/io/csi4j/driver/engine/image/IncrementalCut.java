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
 * and a staged volume's writes wait for it (docs/data-path.md, section 7). Two passes, so that the freeze holds the
 * workload for what changed in the last moments, not for all that changed since P:
 * <ul>
 *   <li>Before the freeze, when the pool is a reflink XFS and P is a snapshot of this volume of the image's size: the new
 *       point's temporary file T is a reflink of P, and P's extents are read (P is immutable: no workload waits for
 *       either). Then the first pass ({@link CutPrePass}), with the workload still writing: the ranges where the live
 *       image's extents differ from P's are cloned from the image into T (FICLONERANGE, merged as in the freeze), and
 *       T's extents are read, and compared with P's: D1, where T now differs from P. T is private: nothing writes or
 *       remaps it until the freeze. Any error there: T a reflink of P again, and the freeze does it all (one pass).</li>
 *   <li>Inside the freeze, only when the freezer froze the volume whole (every loop device of its image a mounted
 *       filesystem, so nothing writes the image until the thaw; a block volume's writer is never stopped and would
 *       tear a range-wise copy) and the sizes still match: the second pass, D2, the ranges where the image's extents
 *       differ from T's as read after the first pass ({@link SharedExtentDelta}: a range whose physical extents are
 *       shared holds the same bytes, as a shared extent is never written in place; a range it does not report reads the
 *       same in both, holes and unwritten extents as zeros) are made the image's by FICLONERANGE from the image, which
 *       also makes a hole (or unwritten extent) of the image a hole of the new file (XFS unmaps the destination and maps
 *       only written source extents; other pools, unproven, take the whole clone): one call per range (or a few merged),
 *       no SEEK_DATA or punch per range (each a syscall as dear as the clone itself).</li>
 *   <li>Any other case, and any error on the way, is the whole clone of today, inside the same freeze, over the same
 *       temporary file (FICLONE truncates it first).</li>
 * </ul>
 * <b>Why T then holds the frozen image.</b> Every block T maps came from P (the reflink) or from the image (a clone);
 * no one writes T, and a block T shares with the image is never written in place (the image's write copies it); T's
 * extents read after the first pass are T's extents at the freeze (nothing touched T between), and T holds every
 * block they name, so none was freed and reallocated to the image meanwhile. A block the image wrote after its range
 * was cloned into T was copied-on-write away from T's block: there the image's extent no longer equals T's, and D2
 * reports it. So where D2 reports nothing, T and the frozen image map the same physical blocks (or both read zeros),
 * the same bytes; where it reports a range, the clone makes T the image's. T's list, read before, is walked while the
 * second pass remaps T: only at offsets the walk has passed, and the blocks T gives up cannot become the image's (a
 * frozen image allocates nothing), so no stale address can look shared (SharedExtentDelta's rule for a base read
 * before).
 * <p><b>Why the delta D1 &cup; D2 holds every change since P</b> (what the sender ships, {@link CutDeltas}): take a
 * byte where the new point N differs from P. If it lies in D1, covered. Otherwise T read the same as P there after the
 * first pass (D1 compares the two quiescent files by the same rule), and N differs from T there, so the freeze's
 * compare reports it: it lies in D2. D1 is T against P, not the ranges the first pass found: a range merged over a gap
 * also clones the gap, and a block the workload rewrote in that gap between the walk and the clone would be in neither.
 * <p>The first pass runs on every incremental cut (when P's extents were read): the previous cut's size does not
 * predict this one's (a burst follows idle rounds), and skipping it would bring back the long window exactly then. Its
 * cost, a walk of the image and one of T outside the freeze, is measured in bench/results/replication/README.md
 * ("Two-pass cut": 0.4-0.7 s a round at load 10-15 against a window's clone of up to 5.5 s).
 * <p>The second pass walks the whole image: a write after the first pass may land anywhere, and nothing but the image's
 * extents says where its mapping changed (mtime and the extent count move at every freeze). Its cost is the kernel's,
 * ~2 us an extent, mostly XFS's lookup of whether each extent is shared (no faster without FIEMAP_FLAG_SYNC, with
 * larger windows or in threads: bench/results/replication/2026-11-28-cutwalk-where.md); {@link ImageFreezer} runs it
 * real-time so that it does not also wait for CPU.
 * <p>Everything after the thaw is as for a whole clone: the file is synced and renamed by the reveal; a crash before
 * leaves a {@code .tmp} leftover that the start-up sweep removes.
 */
final class IncrementalCut {
    private static final Logger LOG = Logger.getLogger(IncrementalCut.class.getName());

    /**
     * P's (and, after the first pass, T's) extents are read before the freeze up to this many (some 50 MB); beyond, P's
     * are walked inside it as the image's are, with no first pass.
     */
    static final int MAX_READ_BEFORE = 1 << 20;

    private final Path image;
    private final Path temp;
    private final Path base;          // null: no incremental cut (whyNot says why)
    private final String baseId;
    private final List<ExtentFile.Extent> baseExtents;   // P's, read before the freeze; null: walked inside it
    private final CutPrePass.Done firstPass;             // null: none, the freeze compares with P
    private String whyNot;
    /** What the new point differs from the base in, once cut incrementally (null otherwise, or past {@link CutDeltas#MAX_RANGES}). */
    private List<RangeCursor.Range> applied;

    private IncrementalCut(Path image, Path temp, Path base, String baseId, List<ExtentFile.Extent> baseExtents,
                           CutPrePass.Done firstPass, String whyNot) {
        this.image = image;
        this.baseExtents = baseExtents;
        this.firstPass = firstPass;
        this.temp = temp;
        this.base = base;
        this.baseId = baseId;
        this.whyNot = whyNot;
    }

    /** A cut of a volume with no base: whole. */
    static IncrementalCut whole(ImagePool images, String volumeId, Path temp, String why) {
        return new IncrementalCut(images.image(volumeId), temp, null, "", null, null, why);
    }

    /** Before the freeze: {@code temp} a reflink of the base plus the first pass, when the rule lets this cut be incremental. */
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
            CutPrePass.Done first = baseExtents == null ? null : firstPass(image, base, temp, baseExtents);
            return new IncrementalCut(image, temp, base, baseSnapshotId, baseExtents, first, null);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "preparing an incremental cut of " + volumeId + " since " + baseSnapshotId + "; cutting it whole", e);
            return whole(images, volumeId, temp, "preparing failed: " + e.getMessage());
        }
    }

    /** The first pass; null (temp a reflink of the base again: the freeze does it all) when it could not be done. */
    private static CutPrePass.Done firstPass(Path image, Path base, Path temp, List<ExtentFile.Extent> baseExtents) {
        try {
            CutPrePass.Done done = CutPrePass.run(image, temp, baseExtents, MAX_READ_BEFORE);
            if (done != null && done.tempExtents() != null) return done;
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "the pass before the freeze of a cut of " + image + " failed; the freeze does it all", e);
        }
        Reflink.clone(base, temp);
        return null;
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
    Optional<CutDeltas.Delta> delta(String snapshotId, long sizeBytes) {
        return applied == null ? Optional.empty() : Optional.of(new CutDeltas.Delta(baseId, snapshotId, sizeBytes, applied));
    }

    /** The changed ranges applied to temp; null (whyNot set) when anything failed: temp is then anything. */
    private String applyDelta() {
        try (ExtentFile baseFile = baseExtents == null ? ExtentFile.open(base) : null;
             ExtentFile imageExtents = ExtentFile.open(image);
             Reflink.Ranges target = Reflink.ranges(image, temp)) {
            if (imageExtents.size() != fileSize(temp)) {
                whyNot = "the image was resized since the base was reflinked";
                return null;
            }
            // closed with the files above
            SharedExtentDelta delta = firstPass != null ? new SharedExtentDelta(firstPass.tempExtents(), imageExtents, 0, () -> false)
                    : baseExtents != null ? new SharedExtentDelta(baseExtents, imageExtents, 0, () -> false)
                    : new SharedExtentDelta(baseFile, imageExtents, 0, () -> false);
            MergedClones.Done frozen = MergedClones.apply(delta, target);
            if (ZeroFill.fresh(image)) ZeroFill.mark(temp);
            if (firstPass == null) {
                applied = frozen.found() == null ? null : List.copyOf(frozen.found());
                return "incremental since " + baseId + ": " + frozen.summary();
            }
            applied = CutDeltas.union(firstPass.changedSinceBase(), frozen.found());
            return "incremental since " + baseId + ": " + frozen.summary() + " inside the freeze; " + firstPass.summary()
                    + "; the delta " + (applied == null ? "past " + CutDeltas.MAX_RANGES : applied.size()) + " ranges";
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "incremental cut of " + image + " since " + baseId + " failed; cutting it whole", e);
            whyNot = "incremental failed: " + e.getMessage();
            return null;
        }
    }
}
