package io.csi4j.driver.engine;

/**
 * A real engine: where volume and snapshot bytes live, its core ({@link PoolStorage}: artifacts in the pool) and the
 * {@link Capability capabilities} it offers (its node side {@link NodeStorage}: attach, stage, publish; and more).
 * Two implementations: {@code engine.image.ImageEngine} (sparse image files attached through loop devices, reflink
 * snapshots) and {@link DirEngine} (directories), both on the skeleton {@link PoolEngine}; {@code engine.open.Engines#open}
 * makes one.
 */
public sealed interface StorageEngine extends PoolStorage permits PoolEngine {
}
