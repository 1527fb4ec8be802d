package io.csi4j.driver.engine.image;

import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.ArtifactStore;
import io.csi4j.driver.engine.IdLocks;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.os.Reflink;
import io.csi4j.driver.os.SparseCopy;
import io.csi4j.driver.os.ZeroFill;
import io.csi4j.driver.storage.StorageException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
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
