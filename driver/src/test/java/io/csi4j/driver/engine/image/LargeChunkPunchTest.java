package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.DataPath;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.OptionalLong;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A resync by checksums with chunks of up to 64 MiB sends a chunk that is zeros on the primary as one range of zeros of
 * the chunk's length: the receiver punches it in one call, over data its base holds, and the build reads zeros there
 * with the blocks freed, the bytes around it untouched.
 */
@ExtendWith(LeakCheck.class)
class LargeChunkPunchTest {
    private static final int MIB = 1 << 20;

    @Test
    void aZeroChunkOf64MiBIsPunchedInOneCall() throws Exception {
        ScratchFilesystem.require("xfs");
        try (ScratchFilesystem scratch = ScratchFilesystem.create("xfs", 768L * MIB)) {
            LeakCheck.watch(scratch.dir());
            Pool pool = Pool.open(new DataDir(scratch.mountPoint().resolve("data")), OptionalLong.empty());
            try (ImageEngine engine = ImageEngine.open(pool, new ImageEngine.Options(1.0, DataPath.CONFIGURED.volumeDirectIo()))) {
                DataMover mover = engine.capability(DataMover.class).orElseThrow();
                String vol = ObjectId.generate(ObjectId.Kind.VOLUME, "node-1").toString();
                long size = 130L * MIB;
                // the base: a first point of random data over [0, 130 MiB), kept as the replica
                Replica first = new Replica(vol, ObjectId.generate(ObjectId.Kind.SNAPSHOT, "node-2").toString());
                byte[] part = new byte[MIB];
                Random random = new Random(1);
                try (var target = mover.beginImport(vol, size, size, new AccessType.Block(), "point", Label.NONE, null, first)) {
                    for (long at = 0; at < size; at += MIB) {
                        random.nextBytes(part);
                        target.write(ByteBuffer.wrap(part), at);
                    }
                    target.commit();
                }
                Path image = engine.images().image(vol);
                long blocksBefore = blocks(image);
                byte[] head = read(image, 64L * MIB - 4096, 4096), tail = read(image, 128L * MIB, 4096);

                // the next point: chunk 1 of 64 MiB is zeros there, one range of zeros
                Replica second = new Replica(vol, ObjectId.generate(ObjectId.Kind.SNAPSHOT, "node-2").toString());
                try (var target = mover.beginImport(vol, size, size, new AccessType.Block(), "point", Label.NONE, first, second)) {
                    target.zero(64L * MIB, 64L * MIB);
                    target.commit();
                }
                assertArrayEquals(new byte[MIB], read(image, 64L * MIB, MIB), "the chunk's start reads zeros");
                assertArrayEquals(new byte[MIB], read(image, 127L * MIB, MIB), "the chunk's end reads zeros");
                assertArrayEquals(head, read(image, 64L * MIB - 4096, 4096), "the bytes before untouched");
                assertArrayEquals(tail, read(image, 128L * MIB, 4096), "the bytes after untouched");
                long freed = blocksBefore - blocks(image);
                assertTrue(freed >= 60L * MIB, "the blocks of the chunk freed: " + freed + " bytes");

                engine.deleteVolume(vol);
                mover.dropReplicas(vol);
            }
        }
    }

    private static long blocks(Path file) throws Exception {
        return io.csi4j.driver.os.Fallocate.allocatedBytes(file);
    }

    private static byte[] read(Path file, long offset, int length) throws Exception {
        try (var channel = java.nio.channels.FileChannel.open(file)) {
            ByteBuffer buffer = ByteBuffer.allocate(length);
            while (buffer.hasRemaining() && channel.read(buffer, offset + buffer.position()) > 0) { }
            return Arrays.copyOf(buffer.array(), length);
        }
    }
}
