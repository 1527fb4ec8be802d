package io.csi4j.driver.volume;

/** What a volume took in the pool (allocated bytes, not its size) before and after a reclaim. */
public record SpaceUsage(long before, long after) {}
