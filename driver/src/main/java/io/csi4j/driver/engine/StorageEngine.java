package io.csi4j.driver.engine;

/**
 * Where volume and snapshot bytes live: a pool side ({@link PoolStorage}: artifacts) and a node side
 * ({@link NodeStorage}: attach, stage, publish). Two implementations: {@link ImageEngine} (sparse image
 * files attached through loop devices, reflink snapshots) and {@link DirEngine} (directories), both on the
 * skeleton {@link PoolEngine}; {@link EngineKind#open} makes one.
 */
public sealed interface StorageEngine extends PoolStorage, NodeStorage permits PoolEngine {
}
