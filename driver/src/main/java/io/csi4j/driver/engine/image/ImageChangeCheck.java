package io.csi4j.driver.engine.image;

import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.ChangeCheck;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.os.ExtentFile;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.ZeroFill;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@link ChangeCheck} of the image engine, on a reflink XFS pool only (where {@link SharedExtentDelta}'s rule is
 * proven, as for {@link IncrementalCut}). The argument:
 * <ul>
 *   <li>Under the volume's lock, which a stage holds while it attaches and every other writer of the image holds
 *       (expansion, reclaim, preallocation), no loop device uses the image: nothing outside the agent can write it,
 *       and nothing inside can until the lock is let go. A staged or published volume is never "unchanged": its
 *       filesystem's freeze and thaw write its superblock at every cut anyway.</li>
 *   <li>Shared blocks are never written in place (docs/replication.md, "What rounds rely on"). Where the image maps
 *       the very physical blocks the snapshot maps at the same offsets, those blocks are shared (the snapshot holds
 *       them, so they cannot have been freed and reused meanwhile): the bytes are the snapshot's. Where neither holds
 *       data both read zeros. {@link SharedExtentDelta} reports every other range; none reported, equal sizes and the
 *       same zero-fill mark: the image is the snapshot. That it is also the point its holder holds needs the id rule:
 *       a point's file is never written while its id names it (today: never written after its cut).</li>
 *   <li>FIEMAP is asked with FIEMAP_FLAG_SYNC (dirty pages of the image written first). The sizes are compared when the
 *       files are opened and again after the walk (nothing replaces the image under the lock: a round's rename and
 *       {@link ImagePool#ownImage} hold it too).</li>
 * </ul>
 */
final class ImageChangeCheck implements ChangeCheck {
    private static final Logger LOG = Logger.getLogger(ImageChangeCheck.class.getName());

    private final ImagePool images;

    ImageChangeCheck(ImagePool images) {
        this.images = images;
    }

    @Override
    public boolean unchangedSince(String volumeId, String snapshotId) {
        try {
            PoolLayout.checkId("volume", volumeId);
            PoolLayout.checkId("snapshot", snapshotId);
            if (!images.pool().reflink() || !"xfs".equals(images.pool().filesystem())) return false;
            Path point = images.snapshotImage(snapshotId);
            if (!Files.isRegularFile(point)) return false;
            Optional<String> source = images.layout().readSidecar(Artifact.Kind.SNAPSHOT, snapshotId).map(Artifact::source);
            if (!source.equals(Optional.of(Artifact.volumeSource(volumeId)))) return false;
            return images.locks().locked(volumeId, () -> same(images.image(volumeId), point));
        } catch (RuntimeException e) {
            LOG.log(Level.FINE, "whether " + volumeId + " is unchanged since " + snapshotId + ": not proven", e);
            return false;
        }
    }

    /** Under the volume's lock. */
    private static boolean same(Path image, Path point) {
        if (!Files.isRegularFile(image) || !LoopDevice.findUsingCanonicalPath(image).isEmpty()) return false;
        if (ZeroFill.fresh(image) != ZeroFill.fresh(point)) return false;
        try (ExtentFile p = ExtentFile.open(point); ExtentFile i = ExtentFile.open(image)) {
            if (p.size() != i.size()) return false;
            if (new SharedExtentDelta(p, i, 0, () -> false).next() != null) return false;
            return Files.size(image) == i.size();   // and no growth meanwhile (nothing else replaces it under the lock)
        } catch (java.io.IOException e) {
            return false;
        }
    }
}
