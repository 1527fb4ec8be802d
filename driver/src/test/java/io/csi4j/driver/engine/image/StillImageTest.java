package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.DataPath;
import io.csi4j.driver.engine.NodeStorage;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.engine.StillImage;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.mobility.ChunkHashes;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.storage.StorageException;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The base a fenced old primary resyncs from (docs/replication.md, "Resync by checksums"): a still copy of the volume's
 * own image, refused while a loop device backs the image, unchanged by any later write to the image, so the new image
 * is built from exactly what was hashed; an import from it closed uncommitted (a crash's effect) leaves the image as it
 * was, and nothing is left in the pool's temporary directory.
 */
@ExtendWith(LeakCheck.class)
class StillImageTest {
    private static final long MIB = 1 << 20;

    @Test
    void theStillCopyIsWhatWasHashedAndTheBaseOfTheBuild() throws Exception {
        ScratchFilesystem.require("xfs");
        try (ScratchFilesystem scratch = ScratchFilesystem.create("xfs", 512 * MIB)) {
            LeakCheck.watch(scratch.dir());
            Path node = LeakCheck.temporaryDirectory("csi4j-still-image-");
            Pool pool = Pool.open(new DataDir(scratch.mountPoint().resolve("data")), OptionalLong.empty());
            try (ImageEngine engine = ImageEngine.open(pool, new ImageEngine.Options(1.0, DataPath.CONFIGURED.volumeDirectIo()))) {
                DataMover mover = engine.capability(DataMover.class).orElseThrow();
                String vol = ObjectId.generate(ObjectId.Kind.VOLUME, "node-1").toString();
                engine.createVolume(vol, 8 * MIB, new AccessType.Block(), Label.NONE);
                Path image = engine.images().image(vol);
                write(image, 0, 'A');
                write(image, 2 * MIB, 'F');                       // the fenced copy's own write, not on the primary

                // attached (staged): refused, nothing made
                NodeStorage storage = engine.capability(NodeStorage.class).orElseThrow();
                Path staging = node.resolve("staging");
                storage.stage(vol, staging, new StageOptions.Block(0));
                try {
                    var refused = assertThrows(StorageException.class, () -> mover.stillImage(vol));
                    assertEquals(StorageException.Reason.IN_USE, refused.reason(), refused.getMessage());
                } finally {
                    storage.unstage(vol, staging);
                }
                assertEquals(List.of(), temporary(engine));

                byte[] before = Files.readAllBytes(image);
                try (StillImage still = mover.stillImage(vol).orElseThrow()) {
                    ChunkHashes hashes = ChunkHashes.of("volume-image", still, () -> false);
                    assertEquals(2, hashes.indexes().length, "the two written chunks listed: " + hashes);
                    write(image, 0, 'Z');                         // the image changes after the hashing: the base does not
                    byte[] held = new byte[(int) still.sizeBytes()];
                    still.read(ByteBuffer.wrap(held), 0);
                    assertArrayEquals(before, held, "the still copy is the image as hashed");

                    // an import from it closed uncommitted (a crash's effect): the image as it was, nothing kept
                    byte[] current = Files.readAllBytes(image);
                    Replica point = new Replica(vol, ObjectId.generate(ObjectId.Kind.SNAPSHOT, "node-2").toString());
                    try (var target = mover.beginImport(vol, 8 * MIB, 8 * MIB, new AccessType.Block(), "point", Label.NONE, still, point)) {
                        target.write(ByteBuffer.wrap(fill('B')), MIB);
                    }
                    assertArrayEquals(current, Files.readAllBytes(image), "an uncommitted build changes nothing");
                    assertEquals(List.of(), mover.replicas());

                    // the build: the still copy plus what differs (the primary's chunk at 1 MiB; its zeros over the fenced write)
                    try (var target = mover.beginImport(vol, 8 * MIB, 8 * MIB, new AccessType.Block(), "point", Label.NONE, still, point)) {
                        target.write(ByteBuffer.wrap(fill('B')), MIB);
                        target.zero(2 * MIB, 64 * 1024);
                        target.commit();
                    }
                    byte[] built = Files.readAllBytes(image);
                    byte[] expected = before.clone();
                    Arrays.fill(expected, (int) MIB, (int) MIB + 64 * 1024, (byte) 'B');
                    Arrays.fill(expected, (int) (2 * MIB), (int) (2 * MIB) + 64 * 1024, (byte) 0);
                    assertArrayEquals(expected, built, "the still copy (not the later 'Z') plus the chunks sent");
                    assertEquals(List.of(point), mover.replicas(), "the result is kept as the point; the image never was one");
                }
                assertEquals(List.of(), temporary(engine), "the still copy removed at close");
                engine.deleteVolume(vol);
                mover.dropReplicas(vol);
            }
        }
    }

    private static List<Path> temporary(ImageEngine engine) throws Exception {
        Path tmp = engine.images().layout().temporary("x", "").getParent();
        try (Stream<Path> files = Files.list(tmp)) {
            return files.toList();
        }
    }

    private static byte[] fill(char mark) {
        byte[] bytes = new byte[64 * 1024];
        Arrays.fill(bytes, (byte) mark);
        return bytes;
    }

    private static void write(Path file, long offset, char mark) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(offset);
            f.write(fill(mark));
            f.getFD().sync();
        }
    }
}
