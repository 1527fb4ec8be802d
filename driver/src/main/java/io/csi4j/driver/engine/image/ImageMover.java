package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.EngineErrors.translate;
import static io.csi4j.driver.engine.image.ImageFormat.MIB;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.ImageImport;
import io.csi4j.driver.engine.ImportBase;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.engine.SourceImage;
import io.csi4j.driver.engine.StillImage;
import io.csi4j.driver.os.Durable;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.Reflink;
import io.csi4j.driver.os.SparseFile;
import io.csi4j.driver.storage.StorageException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Moving volumes between nodes ({@link DataMover}): an image to send (a snapshot's as it is, a volume's cut now), a
 * volume made of bytes that arrive, and the replicas of other nodes' snapshots kept for the next delta.
 */
final class ImageMover implements DataMover {
    private final ImagePool images;
    private final ImageCapacity capacity;
    private final ImageFreezer freezer;

    ImageMover(ImagePool images, ImageCapacity capacity, ImageFreezer freezer) {
        this.images = images;
        this.capacity = capacity;
        this.freezer = freezer;
    }

    /** A snapshot's image as it is; a volume's cut now into .tmp (frozen if mounted), removed again at close. */
    @Override
    public SourceImage openSource(Artifact.Kind kind, String id) {
        PoolLayout.checkId(PoolLayout.kindName(kind), id);
        return translate("opening " + PoolLayout.kindName(kind) + " " + id + " to send", () -> {
            images.store().require(kind, id);
            if (kind == Artifact.Kind.SNAPSHOT) return new FileSourceImage(images.snapshotImage(id), false);
            Path cut = images.layout().temporary(id, ".send");
            try {
                freezer.cut(List.of(id), () -> images.cloneOrCopy(images.image(id), cut));
                return new FileSourceImage(cut, true);
            } catch (RuntimeException e) {
                PoolLayout.deleteQuietly(cut);
                throw e;
            }
        });
    }

    /**
     * A sparse temporary image of {@code sourceBytes} (a reflink of {@code base} when given: a replica, or a still copy
     * of the volume's image, cut or grown to that size), its final size promised to the pool now. Commit syncs it, keeps it as the replica of
     * {@code keepAs} (when given: the snapshot it now holds, replacing older replicas of that source volume), grows
     * it to {@code capacityBytes} and reveals it; IN_USE, nothing kept or revealed, while a loop device backs the
     * volume's current image (or an image of it replaced before this check existed).
     */
    @Override
    public ImageImport beginImport(String volumeId, long sourceBytes, long capacityBytes, AccessType access, String sourceRef,
                                   Artifact.Label label, ImportBase base, Replica keepAs) {
        PoolLayout.checkId("volume", volumeId);
        ImagePool.checkCapacity(capacityBytes);
        long size = capacityBytes == 0 ? sourceBytes : Math.max(Math.ceilDiv(capacityBytes, MIB) * MIB, sourceBytes);
        if (capacityBytes != 0 && capacityBytes < sourceBytes) {
            throw StorageException.outOfRange(sourceRef + " holds " + sourceBytes + " bytes; " + capacityBytes + " cannot hold it");
        }
        String what = "volume " + volumeId + " (a copy of " + sourceRef + ")";
        // a round (or a handoff's pull, or a larger point) replaces the volume's image: only growth is a new promise,
        // and at commit the replaced image's bytes leave the count (else every round added the whole size again and
        // a secondary refused its rounds with NO_SPACE after pool x overcommit / size of them)
        long promise = Math.max(0, size - imageBytes(volumeId));
        capacity.reserve(promise, "volume " + volumeId);
        AtomicLong replacedBytes = new AtomicLong();
        PoolLayout layout = images.layout();
        Path temp = layout.temporary(volumeId, ".img");
        try {
            translate("starting " + what, () -> {
                if (base != null) {
                    Reflink.clone(switch (base) {
                        case Replica r -> replicaFile(r);
                        case StillFile still -> still.file();
                        case StillImage other -> throw new IllegalArgumentException("not this engine's still image: " + other);
                    }, temp);
                    ImagePool.sized(temp, sourceBytes);
                } else {
                    SparseFile.create(temp, sourceBytes);
                }
                return null;
            });
        } catch (RuntimeException e) {
            capacity.settle(promise, 0);
            PoolLayout.deleteQuietly(temp);
            throw e;
        }
        return new FileImageImport(temp, what, t -> {
            Durable.fsync(t);
            // the look at the loop devices and the rename under the volume's lock, which a stage holds while it attaches:
            // a stage either came first (refused here, nothing changed) or attaches the new image. A stage between an
            // unlocked look and the rename would keep a mount of the unlinked old image no later look could see.
            return images.locks().locked(volumeId, () -> {
                List<LoopDevice> attached = LoopDevice.findUsingCanonicalPath(images.image(volumeId));
                if (!attached.isEmpty()) {
                    throw StorageException.inUse("volume " + volumeId + " is attached on this node as "
                            + attached.stream().map(d -> d.node().toString()).toList() + " (staged or published); its image is not replaced");
                }
                // the replica is the image itself (a hard link) unless the image grows past the point: one reflink a
                // round saved, whose cost follows the image's extent count; whatever writes the image first makes it
                // its own file (ImagePool.ownImage), so the replica stays the point
                if (keepAs != null && images.pool().reflink()) keepReplica(t, keepAs, size == sourceBytes);
                if (size > sourceBytes) ImagePool.sized(t, size);
                replacedBytes.set(imageBytes(volumeId));
                layout.reveal(List.of(new PoolLayout.Finished(new Artifact(volumeId, Artifact.Kind.VOLUME, ImagePool.NAME, size, access,
                        sourceRef, Instant.now()).withLabel(label), t)));
                return size;
            });
        }, provisioned -> capacity.settle(promise, provisioned == 0 ? 0 : provisioned - replacedBytes.get()));
    }

    /** The size of the volume's image in this pool, 0 when it has none. */
    private long imageBytes(String volumeId) {
        try {
            return Files.size(images.image(volumeId));
        } catch (java.nio.file.NoSuchFileException e) {
            return 0;
        } catch (IOException e) {
            throw new UncheckedIOException("reading the size of volume " + volumeId + "'s image", e);
        }
    }

    /** The replicas this pool keeps (source volume id -> snapshot id); none where the pool cannot reflink. */
    @Override
    public List<Replica> replicas() {
        return translate("listing replicas", images.layout()::replicas);
    }

    @Override
    public void dropReplicas(String sourceVolumeId) {
        translate("dropping the replicas of " + sourceVolumeId, () -> {
            images.layout().dropReplicas(sourceVolumeId, "");
            return null;
        });
    }

    @Override
    public boolean keepSnapshotAsReplica(String volumeId, String snapshotId) {
        if (!images.pool().reflink()) return false;
        Replica keep = new Replica(volumeId, snapshotId);
        translate("keeping snapshot " + snapshotId + " as a replica", () -> {
            images.store().require(Artifact.Kind.SNAPSHOT, snapshotId);
            Path temp = images.layout().temporary(snapshotId, ".replica");
            try {
                Reflink.clone(images.snapshotImage(snapshotId), temp);
                images.layout().commitReplica(temp, keep);
                images.layout().dropReplicas(volumeId, snapshotId);   // after the commit: never no base and never two
            } finally {
                PoolLayout.deleteQuietly(temp);
            }
            return null;
        });
        return true;
    }

    @Override
    public void dropReplica(Replica replica) {
        translate("dropping replica " + replica, () -> {
            images.layout().dropReplica(replica);
            return null;
        });
    }

    /** The replica file's modification time: its data was last written by the round that kept it (a hard link of the
     * built image is written again only by the next round applied in place, {@link InPlaceRounds}, which sets the time
     * and renames it to its new point; anything else that writes the image first makes it its own file,
     * {@link ImagePool#ownImage}). */
    @Override
    public Instant keptAt(Replica replica) {
        return translate("reading when replica " + replica + " was kept", () -> {
            try {
                return Files.getLastModifiedTime(replicaFile(replica), java.nio.file.LinkOption.NOFOLLOW_LINKS).toInstant();
            } catch (java.nio.file.NoSuchFileException e) {
                throw StorageException.notFound("replica " + replica + " does not exist on this node");
            } catch (IOException e) {
                throw new UncheckedIOException("reading the modification time of " + replicaFile(replica), e);
            }
        });
    }

    @Override
    public SourceImage openReplica(Replica replica) {
        return translate("opening replica " + replica + " to read", () -> {
            Path file = replicaFile(replica);
            if (!Files.exists(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                throw StorageException.notFound("replica " + replica + " does not exist on this node");
            }
            return new FileSourceImage(file, false);
        });
    }

    @Override
    public java.util.Optional<StillImage> stillImage(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        if (!images.pool().reflink()) return java.util.Optional.empty();
        // under the volume's lock, which a stage holds while it attaches: no loop device now means no mount writes the
        // image while it is cloned; the clone is private, so nothing changes what is hashed and built from afterwards
        return java.util.Optional.of(translate("taking a still copy of volume " + volumeId + "'s image", () -> images.locks().locked(volumeId, () -> {
            images.store().require(Artifact.Kind.VOLUME, volumeId);
            List<LoopDevice> attached = LoopDevice.findUsingCanonicalPath(images.image(volumeId));
            if (!attached.isEmpty()) {
                throw StorageException.inUse("volume " + volumeId + " is attached on this node as "
                        + attached.stream().map(d -> d.node().toString()).toList() + " (staged or published); its image is not read");
            }
            Path still = images.layout().temporary(volumeId, ".still");
            try {
                Reflink.clone(images.image(volumeId), still);
                return new StillFile(still);
            } catch (RuntimeException e) {
                PoolLayout.deleteQuietly(still);
                throw e;
            }
        })));
    }

    private Path replicaFile(Replica replica) {
        return images.layout().replica(replica.sourceVolumeId(), replica.snapshotId());
    }

    /**
     * {@code image} (synced) durably under the replica's name, as a hard link of it when {@code link} (the same
     * inode: the image must not be written before {@link ImagePool#ownImage}, but by the next round applied in place,
     * {@link InPlaceRounds}, which renames the replica with it), else a reflink; older replicas of that
     * source volume go.
     */
    private void keepReplica(Path image, Replica keep, boolean link) {
        PoolLayout layout = images.layout();
        Path temp = layout.temporary(keep.snapshotId(), ".replica");
        try {
            if (link) {
                try {
                    Files.createLink(temp, image);
                } catch (IOException e) {
                    throw new UncheckedIOException("linking " + image + " as " + temp, e);
                }
            } else {
                Reflink.clone(image, temp);
            }
            layout.commitReplica(temp, keep);
            layout.dropReplicas(keep.sourceVolumeId(), keep.snapshotId());
        } finally {
            PoolLayout.deleteQuietly(temp);
        }
    }
}
