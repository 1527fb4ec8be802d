package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.EngineErrors.translate;

import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.engine.PoolLayout.EntryType;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountTable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** Whether volumes are healthy: the image is there, and no filesystem on it went read-only after errors. */
final class ImageConditions {
    private final ImagePool images;

    ImageConditions(ImagePool images) {
        this.images = images;
    }

    Optional<String> of(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        return translate("checking volume " + volumeId, () -> {
            if (!images.layout().exists(Artifact.Kind.VOLUME, volumeId, EntryType.FILE)) {
                return Optional.of("volume image " + images.image(volumeId) + " is missing");
            }
            MountTable table = MountTable.read();
            for (LoopDevice device : LoopDevice.findByCanonicalBackingFile(images.image(volumeId))) {
                Optional<String> readOnly = LoopStats.readOnlyAfterErrors(table, table.mountsOf(device.node()));
                if (readOnly.isPresent()) return readOnly;
            }
            return Optional.empty();
        });
    }

    /** A page of volumes with one read of the mount table and the loop devices, not one per volume. */
    Map<String, Optional<String>> of(List<String> volumeIds) {
        return translate("checking " + volumeIds.size() + " volumes", () -> {
            Set<String> present = images.layout().present(Artifact.Kind.VOLUME, volumeIds, EntryType.FILE);
            MountTable table = null;
            Map<String, List<LoopDevice>> attached = null;  // by image file name: no Path made per listed volume
            Path dir = images.layout().dir(Artifact.Kind.VOLUME);
            Map<String, Optional<String>> conditions = new HashMap<>();
            for (String volumeId : volumeIds) {
                if (!present.contains(volumeId)) {
                    conditions.put(volumeId, Optional.of("volume image " + dir.resolve(volumeId + ".img") + " is missing"));
                    continue;
                }
                if (attached == null) {  // once per page: the mount table and every bound loop device
                    table = MountTable.read();
                    attached = new HashMap<>();
                    for (LoopDevice d : LoopDevice.listWithCapacity()) {  // images are never empty
                        Path file = d.backingFile();
                        if (!d.backingFileDeleted() && dir.equals(file.getParent())) {
                            attached.computeIfAbsent(file.getFileName().toString(), f -> new ArrayList<>()).add(d);
                        }
                    }
                }
                Optional<String> condition = Optional.empty();
                List<LoopDevice> devices = attached.isEmpty() ? List.of() : attached.getOrDefault(volumeId + ".img", List.of());
                for (LoopDevice device : devices) {
                    condition = LoopStats.readOnlyAfterErrors(table, table.mountsOf(device.node()));
                    if (condition.isPresent()) break;
                }
                conditions.put(volumeId, condition);
            }
            return conditions;
        });
    }
}
