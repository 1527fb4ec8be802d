package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.EngineErrors.run;
import static io.csi4j.driver.engine.EngineErrors.translate;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.Binds;
import io.csi4j.driver.engine.NodeStorage;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.engine.PublishOptions;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.engine.VolumeStats;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountTable;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeSet;

/**
 * The image engine's node side ({@link NodeStorage}): ids checked and errors translated here, the loop devices,
 * filesystems and mounts in {@link LoopStaging}.
 */
final class ImageNode implements NodeStorage {
    private final ImagePool images;
    private final LoopStaging staging;
    private final ImageFreezer freezer;

    ImageNode(ImagePool images, LoopStaging staging, ImageFreezer freezer) {
        this.images = images;
        this.staging = staging;
        this.freezer = freezer;
    }

    @Override
    public void stage(String volumeId, Path stagingPath, StageOptions stageOptions) {
        PoolLayout.checkId("volume", volumeId);
        run("staging volume " + volumeId + " at " + stagingPath, () -> {
            Path image = images.requireImage(volumeId);
            // made without a sync at create (derivable from its row while blank): durable before anything is written in
            images.layout().syncArtifact(Artifact.Kind.VOLUME, volumeId);
            StageOptions resolved = stageOptions;
            if (stageOptions instanceof StageOptions.Mount(String fs, List<String> flags, long readAhead) && fs.isEmpty()) {
                // no fsType in the capability: the one recorded at creation, else the default
                String recorded = images.layout().readSidecar(Artifact.Kind.VOLUME, volumeId)
                        .map(a -> a.access() instanceof AccessType.Mount(String f) ? f : "").orElse("");
                resolved = new StageOptions.Mount(recorded, flags, readAhead);
            }
            StageOptions options = resolved;
            // under the volume's lock: an offline reclaim holds the image attached where the mount table cannot show it
            images.locks().locked(volumeId, () -> {
                // a secondary's image shares its inode with its replica until first written: every stage splits them,
                // a read-only one too (a read-only mount may still write; docs/replication.md, "What rounds rely on")
                images.ownImage(volumeId);
                staging.stage(volumeId, image, stagingPath, options);
                return null;
            });
        });
    }

    @Override
    public void unstage(String volumeId, Path stagingPath) {
        PoolLayout.checkId("volume", volumeId);
        // after a cut in flight: it holds the staged filesystem open (frozen), which an unmount meanwhile would find busy
        run("unstaging volume " + volumeId + " from " + stagingPath, () -> freezer.outsideCuts(volumeId, () -> {
            staging.unstage(volumeId, images.image(volumeId), stagingPath);
            return null;
        }));
    }

    @Override
    public void publish(String volumeId, Path stagingPath, Path targetPath, PublishOptions publishOptions) {
        PoolLayout.checkId("volume", volumeId);
        run("publishing volume " + volumeId + " at " + targetPath,
                () -> staging.publish(volumeId, images.requireImage(volumeId), stagingPath, targetPath, publishOptions));
    }

    @Override
    public void unpublish(String volumeId, Path targetPath) {
        PoolLayout.checkId("volume", volumeId);
        run("unpublishing volume " + volumeId + " from " + targetPath, () -> freezer.outsideCuts(volumeId, () -> {
            staging.unpublish(volumeId, images.image(volumeId), targetPath);
            return null;
        }));
    }

    @Override
    public List<Path> mountPoints(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        return translate("looking up mounts of volume " + volumeId, () -> {
            MountTable table = MountTable.read();
            var points = new TreeSet<Path>();
            for (LoopDevice device : LoopDevice.findByCanonicalBackingFile(images.image(volumeId))) {
                table.mountsOf(device.node()).forEach(m -> points.add(m.mountPoint()));
                Binds.bindsOf(table, device.node()).forEach(m -> points.add(m.mountPoint()));
            }
            return List.copyOf(points);
        });
    }

    @Override
    public VolumeStats stats(String volumeId, Path volumePath) {
        PoolLayout.checkId("volume", volumeId);
        return translate("stats of volume " + volumeId + " at " + volumePath,
                () -> staging.stats(volumeId, images.image(volumeId), volumePath));
    }

    @Override
    public long nodeExpand(String volumeId, Path volumePath) {
        PoolLayout.checkId("volume", volumeId);
        return translate("growing the filesystem of volume " + volumeId + " at " + volumePath,
                () -> staging.nodeExpand(volumeId, images.requireImage(volumeId), volumePath));
    }
}
