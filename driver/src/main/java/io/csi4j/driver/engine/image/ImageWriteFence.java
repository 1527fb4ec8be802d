package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.EngineErrors.translate;

import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.engine.WriteFence;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.WriteStop;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link WriteFence} of the image engine: the filesystem on each loop device backed by the volume's image is made
 * read-only through one of its mounts ({@link WriteStop}: the superblock, so the publish binds follow). A block
 * publication is left as it is: BLKROSET on the loop device only makes the kernel warn about writes through a
 * descriptor already open (bio_check_ro), so it would promise what it does not do.
 */
final class ImageWriteFence implements WriteFence {
    private final ImagePool images;

    ImageWriteFence(ImagePool images) {
        this.images = images;
    }

    @Override
    public List<String> stopWrites(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        return translate("stopping writes to volume " + volumeId, () -> {
            List<String> done = new ArrayList<>();
            MountTable table = MountTable.read();
            for (LoopDevice device : LoopDevice.findByCanonicalBackingFile(images.image(volumeId))) {
                var mounts = table.mountsOf(device.node());
                if (mounts.isEmpty()) continue;                     // attached only: a block volume, or nothing mounted
                var first = mounts.getFirst().mountPoint();
                done.add(device.node() + " (" + mounts.size() + " mounts, through " + first + "): " + WriteStop.stop(first));
            }
            return done;
        });
    }
}
