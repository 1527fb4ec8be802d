package io.csi4j.driver.engine;

import static io.csi4j.driver.engine.ImageEngineLifecycleTest.volumeId;
import static io.csi4j.driver.engine.TestPool.node;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.image.ImageEngine;
import io.csi4j.driver.storage.StorageException;
import io.csi4j.driver.testing.LeakCheck;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * DeleteVolume's second look at the loop devices (under the volume's lock, before the unlink) is skipped when the
 * in-use check just before found none and nothing was attached since: a stage between the two must still be seen.
 */
@ExtendWith(LeakCheck.class)
class DeleteLookTest {
    private static final long MIB = 1 << 20;
    private static final StageOptions.Mount EXT4 = new StageOptions.Mount("ext4", List.of(), 0);

    @Test
    void aStageBetweenTheInUseCheckAndTheDeleteIsRefused() throws Exception {
        try (TestPool test = TestPool.create("xfs", 512 * MIB); ImageEngine engine = test.imageEngine(1.0)) {
            String vol = volumeId();
            engine.createVolume(vol, 32 * MIB, AccessType.mount("ext4"), Label.NONE);
            assertFalse(engine.inUse(vol));                         // the delete's check before its commit
            node(engine).stage(vol, test.staging(vol), EXT4);       // a stage that came meanwhile
            try {
                StorageException refused = assertThrows(StorageException.class, () -> engine.deleteVolume(vol));
                assertEquals(StorageException.Reason.IN_USE, refused.reason());
                assertTrue(engine.volumeArtifacts().contains(vol), "the image is kept");
            } finally {
                node(engine).unstage(vol, test.staging(vol));
            }
            assertFalse(engine.inUse(vol));
            engine.deleteVolume(vol);
            assertFalse(engine.volumeArtifacts().contains(vol));
            assertEquals(List.of(), test.leftovers());
        }
    }

    @Test
    void aVolumeStagedAndUnstagedBeforeTheCheckIsDeletedAfterOneLook() throws Exception {
        try (TestPool test = TestPool.create("xfs", 512 * MIB); ImageEngine engine = test.imageEngine(1.0)) {
            String vol = volumeId();
            engine.createVolume(vol, 32 * MIB, AccessType.mount("ext4"), Label.NONE);
            node(engine).stage(vol, test.staging(vol), EXT4);
            assertTrue(engine.inUse(vol));
            assertThrows(StorageException.class, () -> engine.deleteVolume(vol), "still staged: refused");
            node(engine).unstage(vol, test.staging(vol));
            assertFalse(engine.inUse(vol));
            engine.deleteVolume(vol);
            assertFalse(engine.volumeArtifacts().contains(vol));
            assertEquals(List.of(), test.leftovers());
        }
    }
}
