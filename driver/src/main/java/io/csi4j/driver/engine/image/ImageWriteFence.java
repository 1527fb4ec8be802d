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
 * read-only through one of its mounts ({@link WriteStop}: the superblock, so the publish binds follow). A loop device
 * with nothing mounted (a staged or published block volume) is made read-only itself ({@link LoopDevice#refuseWrites},
 * BLKROSET): its writers, one holding the published node open included, get EPERM from write(2). Pages a writer
 * dirtied before are still written back, and a shared mmap of the device is not stopped (see docs/replication.md,
 * "Fencing").
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
                if (mounts.isEmpty()) {                             // attached only: a block volume
                    if (device.readOnly()) done.add(device.node() + " (block): already read-only");
                    else if (device.refuseWrites()) done.add(device.node() + " (block): writes refused (BLKROSET)");
                    continue;
                }
                var first = mounts.getFirst().mountPoint();
                done.add(device.node() + " (" + mounts.size() + " mounts, through " + first + "): " + WriteStop.stop(first));
            }
            return done;
        });
    }
}
