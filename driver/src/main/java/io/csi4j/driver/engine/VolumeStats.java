package io.csi4j.driver.engine;

import java.util.Optional;

/**
 * Usage of a published or staged volume. Block volumes report only their total size
 * ({@code -1} for the unknown fields). {@code abnormal} carries the condition message.
 */
public record VolumeStats(long totalBytes, long usedBytes, long availableBytes,
                          long totalInodes, long usedInodes, long availableInodes,
                          Optional<String> abnormal) {}
