package io.csi4j.testkit.suite;

import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeCapability;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * A volume made usable on this node the way a CO does it: controller-published (when advertised),
 * staged (when advertised) and published at {@link #targetPath()}.
 */
public record Attachment(
        Volume volume,
        VolumeCapability capability,
        boolean readonly,
        Map<String, String> publishContext,
        Optional<Path> stagingPath,
        Path targetPath,
        boolean controllerPublished,
        Cleanup.Handle nodeUnpublish,
        Optional<Cleanup.Handle> nodeUnstage,
        Optional<Cleanup.Handle> controllerUnpublish) {

    public String volumeId() {
        return volume.getVolumeId();
    }

    /** The staging path as the wire wants it: empty when the plugin does not stage. */
    public String stagingPathText() {
        return stagingPath.map(Path::toString).orElse("");
    }
}
