package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.DataPath;
import io.csi4j.driver.engine.NodeStorage;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.OptionalLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A round on a secondary keeps its replica as a hard link of the new image (one reflink a round saved, whose cost
 * follows the image's extent count), and whatever writes the image first (stage, expansion, reclaim) makes it a file
 * of its own, so the replica, the next round's base, stays the point it names (docs/replication.md, "A round").
 */
@ExtendWith(LeakCheck.class)
class ReplicaLinkTest {
    private static final long MIB = 1 << 20;

    /** What writes a secondary's image after a round, and whether it may then grow. */
    private record Writer(String name, Consumer<Fixture> write, long sizeAfter) {}

    private record Fixture(ImageEngine engine, String volumeId, Path node) {}

    @Test
    void aReplicaSharesTheImageUntilSomethingWritesTheImage() throws Exception {
        ScratchFilesystem.require("xfs");
        var writers = new Writer[] {
            new Writer("expansion", f -> f.engine().expandVolume(f.volumeId(), 16 * MIB), 16 * MIB),
            new Writer("block stage", f -> {
                NodeStorage node = f.engine().capability(NodeStorage.class).orElseThrow();
                Path staging = f.node().resolve("staging-" + f.volumeId());
                node.stage(f.volumeId(), staging, new StageOptions.Block(0));
                node.unstage(f.volumeId(), staging);
            }, 8 * MIB),
        };
        try (ScratchFilesystem scratch = ScratchFilesystem.create("xfs", 512 * MIB)) {
            LeakCheck.watch(scratch.dir());
            Path node = LeakCheck.temporaryDirectory("csi4j-replica-link-");
            Pool pool = Pool.open(new DataDir(scratch.mountPoint().resolve("data")), OptionalLong.empty());
            try (ImageEngine engine = ImageEngine.open(pool, new ImageEngine.Options(1.0, DataPath.CONFIGURED.volumeDirectIo()))) {
                DataMover mover = engine.capability(DataMover.class).orElseThrow();
                for (Writer writer : writers) {
                    String vol = ObjectId.generate(ObjectId.Kind.VOLUME, "node-1").toString();
                    engine.createVolume(vol, 8 * MIB, new AccessType.Block(), Label.NONE);
                    Path image = engine.images().image(vol);

                    // round 1, a full copy: the replica is the image, one inode
                    Replica first = point(vol);
                    round(mover, vol, 8 * MIB, 8 * MIB, null, first, 0, 'A');
                    Path firstFile = engine.images().layout().replica(vol, first.snapshotId());
                    assertTrue(Files.isSameFile(image, firstFile), writer.name() + ": the replica is a link of the image");
                    assertEquals(2, ImagePool.links(image));

                    // round 2, a delta on the first replica: again one inode, the older replica gone
                    Replica second = point(vol);
                    round(mover, vol, 8 * MIB, 8 * MIB, first, second, MIB, 'B');
                    Path secondFile = engine.images().layout().replica(vol, second.snapshotId());
                    assertTrue(Files.isSameFile(image, secondFile), writer.name() + ": the new replica is a link of the new image");
                    assertFalse(Files.exists(firstFile), writer.name() + ": the older replica is gone");
                    byte[] point = Files.readAllBytes(secondFile);
                    assertEquals('A', point[0]);
                    assertEquals('B', point[(int) MIB]);

                    // the first write makes the image its own file; the replica keeps the point, size and bytes
                    writer.write().accept(new Fixture(engine, vol, node));
                    assertEquals(1, ImagePool.links(image), writer.name() + ": the image is a file of its own");
                    assertEquals(1, ImagePool.links(secondFile));
                    assertFalse(Files.isSameFile(image, secondFile));
                    assertEquals(writer.sizeAfter(), Files.size(image));
                    write(image, 2 * MIB, 'C');
                    assertArrayEquals(point, Files.readAllBytes(secondFile), writer.name() + ": the replica is still the point");

                    // a round whose image grows past the point (the copy was expanded first) keeps a reflink, never a link
                    Replica third = point(vol);
                    round(mover, vol, 8 * MIB, writer.sizeAfter(), second, third, 0, 'D');   // replaceImage: the row's capacity
                    Path thirdFile = engine.images().layout().replica(vol, third.snapshotId());
                    if (writer.sizeAfter() > 8 * MIB) {
                        assertEquals(1, ImagePool.links(image), writer.name() + ": grown image, replica reflinked");
                        assertEquals(8 * MIB, Files.size(thirdFile));
                    } else {
                        assertTrue(Files.isSameFile(image, thirdFile));
                    }
                    engine.deleteVolume(vol);
                    mover.dropReplicas(vol);
                }
            }
        }
    }

    private static Replica point(String volumeId) {
        return new Replica(volumeId, ObjectId.generate(ObjectId.Kind.SNAPSHOT, "node-2").toString());
    }

    /** One round's import as {@code VolumeChanges.replaceImage} makes it: the point's bytes, {@code mark} over 64 KiB at {@code offset}. */
    private static void round(DataMover mover, String volumeId, long sourceBytes, long capacity, Replica base, Replica keepAs,
                              long offset, char mark) {
        try (var target = mover.beginImport(volumeId, sourceBytes, capacity, new AccessType.Block(), "point " + keepAs.snapshotId(),
                Label.NONE, base, keepAs)) {
            byte[] bytes = new byte[64 * 1024];
            Arrays.fill(bytes, (byte) mark);
            target.write(ByteBuffer.wrap(bytes), offset);
            target.commit();
        }
    }

    private static void write(Path file, long offset, char mark) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(offset);
            byte[] bytes = new byte[4096];
            Arrays.fill(bytes, (byte) mark);
            f.write(bytes);
        }
    }
}
