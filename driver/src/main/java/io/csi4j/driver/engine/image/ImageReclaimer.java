package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.EngineErrors.run;
import static io.csi4j.driver.engine.EngineErrors.translate;
import static io.csi4j.driver.engine.image.ImageFormat.FILESYSTEMS;

import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.engine.SpaceReclaimer;
import io.csi4j.driver.os.AttachedLoop;
import io.csi4j.driver.os.FileStat;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.LoopFlag;
import io.csi4j.driver.os.Mounts;
import io.csi4j.driver.os.PrivateMounts;
import io.csi4j.driver.os.Tools;
import io.csi4j.driver.os.ZeroFill;
import io.csi4j.driver.os.Trim;
import io.csi4j.driver.storage.StorageException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** Giving a volume's free space back to the pool ({@link SpaceReclaimer}): fstrim where it is mounted, else privately. */
final class ImageReclaimer implements SpaceReclaimer {
    private final ImagePool images;
    private final LoopStaging staging;
    private final ImageNode node;

    ImageReclaimer(ImagePool images, LoopStaging staging, ImageNode node) {
        this.images = images;
        this.staging = staging;
        this.node = node;
    }

    @Override
    public long allocatedBytes(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        return translate("reading volume " + volumeId, () -> FileStat.of(images.requireImage(volumeId)).allocatedBytes());
    }

    @Override
    public void trim(String volumeId, Path volumePath) {
        PoolLayout.checkId("volume", volumeId);
        run("reclaiming free space of volume " + volumeId + " at " + volumePath, () -> {
            Path image = images.requireImage(volumeId);
            if (ZeroFill.thick(image)) return;   // thick keeps all its space by definition: nothing to give back
            staging.trim(volumeId, image, volumePath);
        });
    }

    /**
     * Reclaims the free space of a volume nobody uses (ControllerReclaimSpace): attaches its image to an
     * autoclear loop device, mounts the filesystem in a private mount namespace (no other process sees it),
     * trims it, unmounts. Under the volume's lock, so no stage starts meanwhile. A volume staged here is
     * trimmed where it is mounted instead; a blank one has nothing to give back. Block volumes are refused.
     */
    @Override
    public void trimOffline(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        run("reclaiming free space of volume " + volumeId, () -> images.locks().locked(volumeId, () -> {
            Path image = images.requireImage(volumeId);
            if (ZeroFill.thick(image)) return null;   // thick keeps all its space: nothing to give back
            List<Path> mounts = node.mountPoints(volumeId);
            if (!mounts.isEmpty()) {
                staging.trim(volumeId, image, mounts.getFirst());
                return null;
            }
            if (attached(volumeId)) throw StorageException.inUse("volume " + volumeId + " is attached as a block device");
            images.ownImage(volumeId);   // a trim must not punch the replica that shares a secondary's image
            PrivateMounts.run("csi4j-reclaim-" + volumeId, () -> trimPrivately(volumeId, image));
            return null;
        }));
    }

    /** Whether the image is attached on this node (the engine's inUse). */
    private boolean attached(String volumeId) {
        return translate("looking up volume " + volumeId, () -> !LoopDevice.findByCanonicalBackingFile(images.image(volumeId)).isEmpty());
    }

    private void trimPrivately(String volumeId, Path image) {
        // an empty directory in .tmp, which the start-up sweep clears should a crash leave it
        Path mountPoint = images.layout().temporary(volumeId, ".reclaim");
        try {
            Files.createDirectory(mountPoint, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (IOException e) {
            throw new UncheckedIOException("creating " + mountPoint, e);
        }
        try {
            trimAt(volumeId, image, mountPoint);
        } finally {
            try {
                Files.deleteIfExists(mountPoint);
            } catch (IOException e) {
                // left empty in .tmp: swept at the next start
            }
        }
    }

    private static void trimAt(String volumeId, Path image, Path mountPoint) {
        try (AttachedLoop loop = LoopDevice.attach(image, EnumSet.of(LoopFlag.AUTOCLEAR))) {
            Optional<String> found = Tools.blkidType(loop.node());
            if (found.isEmpty()) return;   // never formatted: nothing allocated to give back
            String fsType = found.get();
            if (!FILESYSTEMS.contains(fsType)) {
                throw StorageException.inUse("volume " + volumeId + " holds " + fsType + ", not a filesystem of ours");
            }
            Mounts.mount(loop.node().toString(), mountPoint, fsType, Set.of(), fsType.equals("xfs") ? "nouuid" : null);
            try {
                Trim.filesystem(mountPoint);
            } finally {
                Mounts.unmount(mountPoint);
            }
        }
    }
}
