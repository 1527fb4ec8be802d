package io.csi4j.driver.model;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/** A ControllerPublishVolume that succeeded: volume {@code volumeId} is published to node {@code nodeId}. */
public record PublicationRecord(
        String volumeId,
        String nodeId,
        boolean readOnly,
        String accessMode,
        Map<String, String> publishContext,
        Instant createdAt) {

    public PublicationRecord {
        Objects.requireNonNull(volumeId, "volumeId");
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(accessMode, "accessMode");
        publishContext = Map.copyOf(publishContext);
        Objects.requireNonNull(createdAt, "createdAt");
    }
}
