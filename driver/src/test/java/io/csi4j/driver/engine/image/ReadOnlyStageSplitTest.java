package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.ImageImport;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.testing.LeakCheck;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A read-only stage of a secondary counts as a writer of its image (docs/replication.md, "What rounds rely on"): the
 * engine's stage is not told the access mode, and {@code ImageNode.stage} makes the image a file of its own
 * ({@link ImagePool#ownImage}) before any stage, so after it the image and the replica of the held point are two
 * files and the replica is still the point. ReplicaLinkTest has the writable cases (a block stage, an expansion).
 */
@ExtendWith(LeakCheck.class)
class ReadOnlyStageSplitTest {
    private static final long SIZE = 32 * XfsEngineFixture.MIB;

    @Test
    void aReadOnlyStageOfASecondarySplitsItsImageFromItsReplica() throws Exception {
        try (var fx = new XfsEngineFixture("ro-stage-split")) {
            byte[] point = ext4Holding(fx, "the point");
            String vol = fx.newVolume(SIZE);
            Replica held = new Replica(vol, ObjectId.generate(ObjectId.Kind.SNAPSHOT, "node-2").toString());
            // a secondary's full round, as VolumeChanges.replaceImage makes it: the replica kept as a hard link of the image
            try (ImageImport round = fx.mover.beginImport(vol, SIZE, SIZE, AccessType.mount("ext4"), "point " + held.snapshotId(),
                    Label.NONE, null, held)) {
                round.write(ByteBuffer.wrap(point), 0);
                round.commit();
            }
            Path image = fx.image(vol);
            Path replica = fx.engine.images().layout().replica(vol, held.snapshotId());
            assertTrue(Files.isSameFile(image, replica), "after a round the replica is a link of the image");

            fx.node.stage(vol, fx.staging(vol), new StageOptions.Mount("ext4", List.of("ro"), 0));
            assertEquals("the point", Files.readString(fx.staging(vol).resolve("f")));
            assertEquals(1, ImagePool.links(image), "a read-only stage made the image a file of its own");
            assertFalse(Files.isSameFile(image, replica));
            fx.node.unstage(vol, fx.staging(vol));

            assertArrayEquals(point, Files.readAllBytes(replica), "the replica is still the point");
            fx.engine.deleteVolume(vol);
            fx.mover.dropReplicas(vol);
        }
    }

    /** The bytes of an ext4 image whose file {@code f} holds {@code text} (another volume's, deleted again). */
    private static byte[] ext4Holding(XfsEngineFixture fx, String text) throws Exception {
        String donor = fx.newVolume(SIZE);
        fx.stage(donor);
        Files.writeString(fx.staging(donor).resolve("f"), text);
        fx.node.unstage(donor, fx.staging(donor));
        byte[] bytes = Files.readAllBytes(fx.image(donor));
        fx.engine.deleteVolume(donor);
        return bytes;
    }
}
