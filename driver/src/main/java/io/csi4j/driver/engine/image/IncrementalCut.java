package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.image.ImageFormat.fileSize;

import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.os.ExtentFile;
import io.csi4j.driver.os.Reflink;
import io.csi4j.driver.os.ZeroFill;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A replication point cut as the point its secondary holds (the base, P) plus what changed since, instead of a whole
 * clone of the image: a clone's cost follows the image's extent count, which copy-on-write after every point multiplies,
 * and a staged volume's writes wait for it (docs/data-path.md, section 7). The rule:
 * <ul>
 *   <li>Before the freeze, when the pool reflinks and P is a snapshot of this volume of the image's size: the new
 *       point's temporary file is a reflink of P (P is immutable: no workload waits for this).</li>
 *   <li>Inside the freeze, only when the freezer froze the volume whole (every loop device of its image a mounted
 *       filesystem, so nothing writes the image until the thaw; a block volume's writer is never stopped and would
 *       tear a range-wise copy) and the sizes still match: the ranges where the image's extents differ from P's
 *       ({@link SharedExtentDelta}: a range whose physical extents are shared holds the same bytes, as a shared extent
 *       is never written in place; a range it does not report reads the same in both, holes and unwritten extents
 *       as zeros) are made the image's: its data ranges shared by FICLONERANGE, its holes (and unwritten extents,
 *       which SEEK_DATA calls holes) punched.</li>
 *   <li>Any other case, and any error on the way, is the whole clone of today, inside the same freeze, over the same
 *       temporary file (FICLONE truncates it first).</li>
 * </ul>
 * Everything after the thaw is as for a whole clone: the file is synced and renamed by the reveal; a crash before
 * leaves a {@code .tmp} leftover that the start-up sweep removes.
 */
final class IncrementalCut {
    private static final Logger LOG = Logger.getLogger(IncrementalCut.class.getName());

    private final Path image;
    private final Path temp;
    private final Path base;          // null: no incremental cut (whyNot says why)
    private final String baseId;
    private String whyNot;

    private IncrementalCut(Path image, Path temp, Path base, String baseId, String whyNot) {
        this.image = image;
        this.temp = temp;
        this.base = base;
        this.baseId = baseId;
        this.whyNot = whyNot;
    }

    /** A cut of a volume with no base: whole. */
    static IncrementalCut whole(ImagePool images, String volumeId, Path temp, String why) {
        return new IncrementalCut(images.image(volumeId), temp, null, "", why);
    }

    /** Before the freeze: {@code temp} a reflink of the base when the rule lets this cut be incremental. */
    static IncrementalCut prepare(ImagePool images, String volumeId, String baseSnapshotId, Path temp) {
        Path image = images.image(volumeId);
        if (baseSnapshotId.isEmpty()) return whole(images, volumeId, temp, "no base");
        if (!images.pool().reflink()) return whole(images, volumeId, temp, "the pool does not reflink");
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
            return new IncrementalCut(image, temp, base, baseSnapshotId, null);
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

    /** The changed ranges applied to temp; null (whyNot set) when anything failed: temp is then anything. */
    private String applyDelta() {
        long ranges = 0;
        long bytes = 0;
        try (ExtentFile baseExtents = ExtentFile.open(base);
             ExtentFile imageExtents = ExtentFile.open(image);
             ExtentFile imageData = ExtentFile.open(image);
             Reflink.Ranges target = Reflink.ranges(image, temp)) {
            if (imageExtents.size() != fileSize(temp)) {
                whyNot = "the image was resized since the base was reflinked";
                return null;
            }
            var delta = new SharedExtentDelta(baseExtents, imageExtents, 0, () -> false);   // closed with the files above
            for (RangeCursor.Range r; (r = delta.next()) != null; ) {
                ranges++;
                bytes += r.length();
                apply(imageData, target, r.offset(), r.offset() + r.length());
            }
            if (ZeroFill.fresh(image)) ZeroFill.mark(temp);
            return String.format("incremental since %s: %d ranges, %d bytes", baseId, ranges, bytes);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "incremental cut of " + image + " since " + baseId + " failed after " + ranges + " ranges; cutting it whole", e);
            whyNot = "incremental failed: " + e.getMessage();
            return null;
        }
    }

    /** {@code [from, end)} of temp made the image's: its data shared, its holes punched. */
    private static void apply(ExtentFile imageData, Reflink.Ranges target, long from, long end) {
        long at = from;
        while (at < end) {
            ExtentFile.Range data = imageData.nextData(at);
            long dataFrom = data == null ? end : Math.min(data.offset(), end);
            if (dataFrom > at) target.punch(at, dataFrom - at);
            if (dataFrom >= end) return;
            long dataEnd = Math.min(data.end(), end);
            target.clone(dataFrom, dataEnd - dataFrom);
            at = dataEnd;
        }
    }
}
