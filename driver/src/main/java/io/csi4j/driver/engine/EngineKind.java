package io.csi4j.driver.engine;

import io.csi4j.driver.storage.DataDir;
import java.util.OptionalLong;

/** The engines there are, and the one way one is opened (serve, fsck and the demo alike). */
public enum EngineKind {
    IMAGE, DIR;

    /**
     * Opens the data directory's pool ({@link Pool#open}: a plain directory, or the XFS image of that size) and
     * this engine on it. {@code overcommitRatio} is how much more than the pool holds the image engine promises.
     */
    public StorageEngine open(DataDir dataDir, OptionalLong poolSizeBytes, double overcommitRatio) {
        Pool pool = Pool.open(dataDir, poolSizeBytes);
        return switch (this) {
            case IMAGE -> ImageEngine.open(pool, new ImageEngine.Options(overcommitRatio, DataPath.CONFIGURED.volumeDirectIo()));
            case DIR -> DirEngine.open(pool);
        };
    }
}
