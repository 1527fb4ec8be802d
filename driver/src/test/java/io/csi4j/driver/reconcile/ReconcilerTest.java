package io.csi4j.driver.reconcile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.Driver;
import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.ContentSource;
import io.csi4j.driver.volume.AccessMode;
import io.csi4j.driver.volume.Capability;
import io.csi4j.driver.volume.CapacityRange;
import io.csi4j.driver.volume.NewVolume;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Crash states the random crash test reaches only by luck, made on purpose. */
class ReconcilerTest {
    private static final long MIB = 1L << 20;

    @TempDir
    Path dataDir;

    @Test
    void anExpansionCutShortAfterTheArtifactGrewIsRecorded() throws Exception {
        DriverConfig config = DriverConfig.defaults(dataDir, "node-r");
        String id;
        try (Driver driver = Driver.open(config)) {
            id = driver.volumes().create(new NewVolume("grown", new CapacityRange(16 * MIB, 0),
                    List.of(Capability.block(AccessMode.SINGLE_NODE_WRITER)), Map.of(), Map.of(), ContentSource.NONE,
                    Optional.empty())).id();
            // the effect of ControllerExpandVolume without its commit: what a kill between the two leaves
            assertEquals(24 * MIB, driver.engine().expandVolume(id, 24 * MIB));
            assertEquals(16 * MIB, driver.catalog().volumes().byId(id).orElseThrow().capacityBytes());
        }
        try (Driver driver = Driver.open(config)) {
            assertEquals(24 * MIB, driver.catalog().volumes().byId(id).orElseThrow().capacityBytes(),
                    "the catalog takes the size the storage has");
            assertTrue(driver.reconcileReport().finished().contains(id), driver.reconcileReport().toString());
            assertEquals(24 * MIB, Files.size(driver.engine().pool().path().resolve("volumes").resolve(id + ".img")));
            // the CO's retry of the interrupted call converges on the same answer
            assertEquals(24 * MIB, driver.volumes().expand(id, new CapacityRange(24 * MIB, 0)).capacityBytes());
        }
        try (Driver driver = Driver.open(config)) {
            assertEquals(List.of(), driver.reconcileReport().finished(), "nothing left to do the next time");
        }
    }
}
