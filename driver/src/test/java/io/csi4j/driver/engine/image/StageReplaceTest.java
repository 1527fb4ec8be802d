package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.ImageImport;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.storage.StorageException;
import io.csi4j.driver.testing.LeakCheck;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A secondary's copy may be staged read-only while a round builds its next point beside it (docs/replication.md,
 * issue 28). The round's import checked "not in use" when it started and renamed the new image over the volume's at
 * commit, seconds later: a stage landing between kept a mount of the unlinked old image, which every later in-use check
 * missed (a loop device's backing file shows " (deleted)"), so a following round, a handoff's demote or DeleteVolume went
 * ahead under a mount. The stage lands here exactly in that window (between beginImport and commit, where a round
 * transfers the delta): the commit must refuse (IN_USE, nothing replaced), and a mount of a replaced image (what an
 * agent without the fix could leave) must count as a use until it is unstaged.
 */
@ExtendWith(LeakCheck.class)
class StageReplaceTest {
    private static final long SIZE = 32 * XfsEngineFixture.MIB;

    @Test
    void aStageDuringAnImportMakesItsCommitRefuseAndKeepsTheMountedImage() throws Exception {
        try (var fx = new XfsEngineFixture("stage-replace")) {
            String vol = volumeHolding(fx, "old");
            byte[] newImage = imageHolding(fx, "new");
            try (ImageImport replacing = fx.mover.beginImport(vol, SIZE, SIZE, AccessType.mount("ext4"), Artifact.volumeSource(vol),
                    Label.NONE, null, null)) {
                replacing.write(ByteBuffer.wrap(newImage), 0);
                fx.node.stage(vol, fx.staging(vol), new StageOptions.Mount("ext4", List.of(), 0));   // in the round's window
                var refused = assertThrows(StorageException.class, replacing::commit);
                assertEquals(StorageException.Reason.IN_USE, refused.reason(), refused.getMessage());
            }
            assertEquals("old", Files.readString(fx.staging(vol).resolve("f")), "the mount serves the image it was staged on");
            assertFalse(LoopDevice.findByBackingFile(fx.image(vol)).isEmpty(), "the staged device backs the volume's image, not an unlinked one");
            assertTrue(fx.engine.inUse(vol));
            fx.node.unstage(vol, fx.staging(vol));

            // unstaged: the same import goes through, and the next stage serves the new image
            try (ImageImport replacing = fx.mover.beginImport(vol, SIZE, SIZE, AccessType.mount("ext4"), Artifact.volumeSource(vol),
                    Label.NONE, null, null)) {
                replacing.write(ByteBuffer.wrap(newImage), 0);
                replacing.commit();
            }
            fx.node.stage(vol, fx.staging(vol), new StageOptions.Mount("ext4", List.of(), 0));
            assertEquals("new", Files.readString(fx.staging(vol).resolve("f")));
            fx.node.unstage(vol, fx.staging(vol));
            assertFalse(fx.engine.inUse(vol));
            fx.engine.deleteVolume(vol);
        }
    }

    @Test
    void aMountOfAReplacedImageIsAUseUntilUnstaged() throws Exception {
        try (var fx = new XfsEngineFixture("stage-replace")) {
            String vol = volumeHolding(fx, "old");
            fx.node.stage(vol, fx.staging(vol), new StageOptions.Mount("ext4", List.of(), 0));
            // what a round of an agent without the commit's check could leave: the image renamed over under the mount
            Path copy = fx.image(vol).resolveSibling(vol + ".by-hand");
            Files.copy(fx.image(vol), copy);
            Files.move(copy, fx.image(vol), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            assertEquals(List.of(), LoopDevice.findByBackingFile(fx.image(vol)), "the kernel shows the mount's file (deleted)");

            assertTrue(fx.engine.inUse(vol), "a mount of the volume's replaced image is still a use of the volume");
            var delete = assertThrows(StorageException.class, () -> fx.engine.deleteVolume(vol));
            assertEquals(StorageException.Reason.IN_USE, delete.reason(), delete.getMessage());
            try (ImageImport replacing = fx.mover.beginImport(vol, SIZE, SIZE, AccessType.mount("ext4"), Artifact.volumeSource(vol),
                    Label.NONE, null, null)) {
                replacing.write(ByteBuffer.wrap(Files.readAllBytes(fx.image(vol))), 0);
                assertEquals(StorageException.Reason.IN_USE, assertThrows(StorageException.class, replacing::commit).reason());
            }

            fx.node.unstage(vol, fx.staging(vol));      // the mount of the replaced image comes down as any stage
            assertFalse(fx.engine.inUse(vol));
            assertTrue(MountTable.read().under(fx.nodeDir).isEmpty(), MountTable.read().under(fx.nodeDir).toString());
            fx.engine.deleteVolume(vol);
        }
    }

    /** A new ext4 volume whose file {@code f} holds {@code text}, unstaged. */
    private static String volumeHolding(XfsEngineFixture fx, String text) throws Exception {
        String vol = fx.newVolume(SIZE);
        fx.stage(vol);
        Files.writeString(fx.staging(vol).resolve("f"), text);
        fx.node.unstage(vol, fx.staging(vol));
        return vol;
    }

    /** The bytes of an ext4 image whose file {@code f} holds {@code text} (another volume's, deleted again). */
    private static byte[] imageHolding(XfsEngineFixture fx, String text) throws Exception {
        String donor = volumeHolding(fx, text);
        byte[] bytes = Files.readAllBytes(fx.image(donor));
        fx.engine.deleteVolume(donor);
        return bytes;
    }
}
