package io.csi4j.driver.volume;

import io.csi4j.driver.model.ContentSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A CreateVolume request in domain terms. {@code allowedNodes} is empty when the caller did not
 * constrain topology; otherwise the volume may only be placed on one of those nodes.
 */
public record NewVolume(String name, CapacityRange range, List<Capability> capabilities,
                        Map<String, String> parameters, Map<String, String> mutableParameters,
                        ContentSource source, Optional<Set<String>> allowedNodes) {
    public NewVolume {
        capabilities = List.copyOf(capabilities);
        parameters = Map.copyOf(parameters);
        mutableParameters = Map.copyOf(mutableParameters);
    }
}
