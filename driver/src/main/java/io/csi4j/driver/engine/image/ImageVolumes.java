package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.EngineErrors.run;
import static io.csi4j.driver.engine.EngineErrors.translate;
import static io.csi4j.driver.engine.image.ImageFormat.MIB;
import static io.csi4j.driver.engine.image.ImageFormat.fileSize;
import static io.csi4j.driver.engine.image.ImagePool.checkCapacity;
import static io.csi4j.driver.engine.image.ImagePool.sized;

import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.engine.PoolLayout.EntryType;
import io.csi4j.driver.os.Durable;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.storage.StorageException;
import java.nio.file.Path;
import java.util.List;

/** Growing and removing volume images, with what they count against the pool. */
final class ImageVolumes {
    private final ImagePool images;
    private final ImageCapacity capacity;
    private final UnattachedLooks unattached;

    ImageVolumes(ImagePool images, ImageCapacity capacity, UnattachedLooks unattached) {
        this.images = images;
        this.capacity = capacity;
        this.unattached = unattached;
    }

    void delete(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        run("deleting volume " + volumeId, () -> {
            // Check, measure and unlink under the id's lock: two deleters of one volume (DeleteVolume finishing
            // a DELETING row while DeleteVolumeGroup deletes its members) must converge, and only the call
            // that really removed the file may return its size to the pool.
            long freed = images.locks().locked(volumeId, () -> {
                long size = 0;
                if (images.layout().exists(Artifact.Kind.VOLUME, volumeId, EntryType.FILE)) {
                    // the caller's in-use check looked a moment ago; look again only if a device may have come since
                    List<LoopDevice> attached = unattached.stillUnattached(volumeId) ? List.of()
                            : LoopDevice.findUsingCanonicalPath(images.image(volumeId));
                    if (!attached.isEmpty()) {
                        throw StorageException.inUse("volume " + volumeId + " is attached as "
                                + attached.stream().map(d -> d.node().toString()).toList() + " (staged or published on this node)");
                    }
                    size = fileSize(images.image(volumeId));
                }
                images.layout().deleteUnsynced(Artifact.Kind.VOLUME, volumeId);  // durable by the caller's tombstone
                return size;
            });
            capacity.settle(0, -freed);
        });
    }

    long expand(String volumeId, long newCapacityBytes) {
        return expand(volumeId, newCapacityBytes, null);
    }

    /** What a thick volume's expansion adds: a check of the real free space first, a fill of the new part after. */
    interface Thickening {
        void requireRoom(long bytes);

        /** Fills the image from {@code exposed} (what attached loop devices show) to its end. */
        void fill(Path image, long exposed);
    }

    /** {@code thick}: null for a thin volume. */
    long expand(String volumeId, long newCapacityBytes, Thickening thick) {
        PoolLayout.checkId("volume", volumeId);
        checkCapacity(newCapacityBytes);
        return translate("expanding volume " + volumeId, () -> {
            Path image = images.image(volumeId);
            // under the id's lock: a concurrent delete must not be undone by sized() re-creating the file
            long size = images.locks().locked(volumeId, () -> {
                images.store().require(Artifact.Kind.VOLUME, volumeId);
                images.ownImage(volumeId);   // a secondary's replica keeps the size of its point
                long current = fileSize(image);
                long target = Math.ceilDiv(newCapacityBytes, MIB) * MIB;
                if (thick != null) {
                    // what loop devices show is in use: never filled (zeros over a write that lands meanwhile);
                    // the rest is filled, also the part a crash left grown but not filled
                    long exposed = LoopDevice.findByCanonicalBackingFile(image).stream()
                            .mapToLong(LoopDevice::size).min().orElse(0);
                    if (target > current) thick.requireRoom(target - current);
                    if (target > current) {
                        capacity.grow(target - current, "growing volume " + volumeId + " by " + (target - current) + " bytes",
                                () -> sized(image, target));
                        images.layout().readSidecar(Artifact.Kind.VOLUME, volumeId).ifPresent(a -> images.layout().writeSidecar(a.withSize(target)));
                    }
                    thick.fill(image, Math.min(exposed, current));
                    return Math.max(target, current);
                }
                if (target <= current) return current;
                capacity.grow(target - current, "growing volume " + volumeId + " by " + (target - current) + " bytes", () -> {
                    sized(image, target);
                    Durable.fsync(image);
                });
                images.layout().readSidecar(Artifact.Kind.VOLUME, volumeId).ifPresent(a -> images.layout().writeSidecar(a.withSize(target)));
                return target;
            });
            LoopStaging.refreshAttached(image, size); // also converges a crash between growing the file and this
            return size;
        });
    }
}
