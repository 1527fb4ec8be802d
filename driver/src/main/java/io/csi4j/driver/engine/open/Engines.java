package io.csi4j.driver.engine.open;

import io.csi4j.driver.engine.DataPath;
import io.csi4j.driver.engine.DirEngine;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.engine.StorageEngine;
import io.csi4j.driver.engine.image.ImageEngine;
import io.csi4j.driver.storage.DataDir;
import java.util.OptionalLong;

/** The one way an engine is opened (serve, fsck and the demo alike). */
public final class Engines {
    private Engines() {}

    /**
     * Opens the data directory's pool ({@link Pool#open}: a plain directory, or the XFS image of that size) and
     * the engine of this kind on it. {@code overcommitRatio} is how much more than the pool holds the image engine promises.
     */
    public static StorageEngine open(EngineKind kind, DataDir dataDir, OptionalLong poolSizeBytes, double overcommitRatio) {
        Pool pool = Pool.open(dataDir, poolSizeBytes);
        return switch (kind) {
            case IMAGE -> ImageEngine.open(pool, new ImageEngine.Options(overcommitRatio, DataPath.CONFIGURED.volumeDirectIo()));
            case DIR -> DirEngine.open(pool);
        };
    }
}
