package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.EngineErrors.run;
import static io.csi4j.driver.engine.EngineErrors.translate;

import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.engine.Preallocation;
import io.csi4j.driver.os.FileStat;
import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.ZeroFill;
import io.csi4j.driver.storage.ByteCount;
import io.csi4j.driver.storage.StorageException;
import java.nio.file.Path;

/** Thick images through {@link ZeroFill}: the image engine's {@link Preallocation}. */
final class ImagePreallocation implements Preallocation {
    private final ImagePool images;
    private final ImageVolumes volumes;

    ImagePreallocation(ImagePool images, ImageVolumes volumes) {
        this.images = images;
        this.volumes = volumes;
    }

    @Override
    public void requireRoom(long bytes) {
        long free = translate("reading the pool's free space", () -> FsStats.of(images.layout().root()).availableBytes());
        if (bytes > free) {
            throw StorageException.noSpace("a thick volume takes all its " + ByteCount.describe(bytes) + " at once; the pool has "
                    + ByteCount.describe(free) + " really free (thick volumes are not overcommitted)");
        }
    }

    @Override
    public void fill(String volumeId, boolean blank) {
        PoolLayout.checkId("volume", volumeId);
        run("filling thick volume " + volumeId, () -> images.locks().locked(volumeId, () -> {
            Path image = images.requireImage(volumeId);
            if (!LoopDevice.findByCanonicalBackingFile(image).isEmpty()) {
                throw StorageException.inUse("volume " + volumeId + " is attached; a thick fill needs it unattached");
            }
            // nothing written yet (a restore of a never-staged thin blank): as blank as a blank once filled
            boolean fresh = blank || FileStat.of(image).allocatedBytes() == 0;
            ZeroFill.fill(image, 0);
            if (fresh) ZeroFill.mark(image);
            // the create was unsynced (a thin blank is derivable from its row; a thick one is not): its name too
            images.layout().syncArtifact(Artifact.Kind.VOLUME, volumeId);
            return null;
        }));
    }

    @Override
    public long expand(String volumeId, long newCapacityBytes) {
        return volumes.expand(volumeId, newCapacityBytes, new ImageVolumes.Thickening() {
            @Override
            public void requireRoom(long bytes) {
                ImagePreallocation.this.requireRoom(bytes);
            }

            @Override
            public void fill(Path image, long exposed) {
                ZeroFill.fill(image, exposed);   // fsyncs: the new size and its blocks durable before the answer
            }
        });
    }
}
