package io.csi4j.driver.model;

import java.util.List;
import java.util.Optional;

/** A volume's use and health as ListVolumes and ControllerGetVolume show them; {@code abnormal} says why, if it is. */
public record VolumeStatus(List<String> publishedNodeIds, Optional<String> abnormal) {
    public VolumeStatus {
        publishedNodeIds = List.copyOf(publishedNodeIds);
    }
}
