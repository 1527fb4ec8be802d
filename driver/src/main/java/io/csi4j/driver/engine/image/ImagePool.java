package io.csi4j.driver.engine.image;

import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.ArtifactStore;
import io.csi4j.driver.engine.IdLocks;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.os.Durable;
import io.csi4j.driver.os.Reflink;
import io.csi4j.driver.os.SparseCopy;
import io.csi4j.driver.os.ZeroFill;
import io.csi4j.driver.storage.StorageException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * What every part of the image engine works on: the pool, its layout, its per-id locks and its artifact store, and
 * the few things each part asks of them (where an image is, copying one as cheaply as the pool can).
 */
record ImagePool(Pool pool, PoolLayout layout, IdLocks locks, ArtifactStore store) {
    static final String NAME = "image";

    Path image(String volumeId) {
        return layout.artifact(Artifact.Kind.VOLUME, volumeId);
    }

    Path snapshotImage(String snapshotId) {
        return layout.artifact(Artifact.Kind.SNAPSHOT, snapshotId);
    }

    /** The volume's image; NOT_FOUND when it does not exist. */
    Path requireImage(String volumeId) {
        store.require(Artifact.Kind.VOLUME, volumeId);
        return image(volumeId);
    }

    /**
     * The volume's image as a file of its own, before anything writes it (attach, resize, trim): a secondary's image
     * and its replica of the point it holds are one inode (hard links, {@link ImageMover}: the round's second reflink
     * saved), which a write would change under the replica, the next round's base. With more than one link the image
     * is replaced, durably, by a reflink of itself (synced, then renamed over its name), so the replica keeps the point.
     * The caller holds the volume's lock. One stat when there is nothing to do. Every stage calls it, a read-only one too
     * (the engine is not told the access mode, and a read-only mount may still write, e.g. an ext4 journal replay):
     * after any stage of a secondary its image and replica are two files ({@code ReadOnlyStageSplitTest}).
     */
    Path ownImage(String volumeId) {
        Path image = image(volumeId);
        if (links(image) <= 1) return image;
        Path temp = layout.temporary(volumeId, ".own");
        try {
            cloneOrCopy(image, temp);
            Durable.fsync(temp);
            Durable.atomicRename(temp, image);
        } finally {
            PoolLayout.deleteQuietly(temp);
        }
        return image;
    }

    /** The hard links of a file (0 when it is not there). */
    static int links(Path file) {
        try {
            return (Integer) Files.getAttribute(file, "unix:nlink", LinkOption.NOFOLLOW_LINKS);
        } catch (java.nio.file.NoSuchFileException e) {
            return 0;
        } catch (IOException e) {
            throw new UncheckedIOException("reading the links of " + file, e);
        }
    }

    /** A reflink where the pool can, else a sparse-aware copy. */
    void cloneOrCopy(Path source, Path target) {
        if (pool.reflink()) Reflink.clone(source, target); else SparseCopy.copy(source, target);
        // a copy of a fresh thick fill is all zeros too: formatted at its first stage like its source would be
        if (ZeroFill.fresh(source)) ZeroFill.mark(target);
    }

    static void checkCapacity(long capacityBytes) {
        if (capacityBytes < 0) throw StorageException.invalid("negative capacity: " + capacityBytes);
    }

    static void sized(Path file, long size) {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(size);
        } catch (IOException e) {
            throw new UncheckedIOException("sizing " + file, e);
        }
    }
}
