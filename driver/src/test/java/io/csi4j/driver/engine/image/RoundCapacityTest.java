package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A secondary's rounds replace its copy's image: the pool's promise stays the volume's size however many rounds run.
 * Before, each round's import counted the whole size again without the image it replaced, and on a long-running
 * secondary every round after about (pool x overcommit) / size of them was refused with NO_SPACE: replication stopped
 * (found by the replication bench: 135 GB "provisioned" in a 32 GiB pool holding one 2 GiB copy).
 */
@ExtendWith(LeakCheck.class)
class RoundCapacityTest {
    private static final long MIB = 1 << 20;

    @Test
    void roundsReplacingAnImageKeepThePromiseAtTheVolumesSize() throws Exception {
        ScratchFilesystem.require("xfs");
        try (ScratchFilesystem scratch = ScratchFilesystem.create("xfs", 512 * MIB)) {
            LeakCheck.watch(scratch.dir());
            Pool pool = Pool.open(new DataDir(scratch.mountPoint().resolve("data")), OptionalLong.empty());
            // overcommit 1: a pool of ~500 MiB promises one 64 MiB volume about seven times, so the old count
            // refused the eighth round
            try (ImageEngine engine = ImageEngine.open(pool, new ImageEngine.Options(1.0, DataPath.CONFIGURED.volumeDirectIo()))) {
                DataMover mover = engine.capability(DataMover.class).orElseThrow();
                String vol = ObjectId.generate(ObjectId.Kind.VOLUME, "node-1").toString();
                long size = 64 * MIB;
                Replica held = null;
                for (int round = 0; round < 20; round++) {
                    Replica next = new Replica(vol, ObjectId.generate(ObjectId.Kind.SNAPSHOT, "node-1").toString());
                    try (var target = mover.beginImport(vol, size, size, new AccessType.Block(), "point", Label.NONE, held, next)) {
                        target.write(ByteBuffer.wrap(new byte[64 * 1024]), (round % 16) * MIB);
                        target.commit();
                    }
                    held = next;
                    assertEquals(size, engine.pool().provisionedBytes(), "after round " + (round + 1));
                }
                // a larger point (an expansion on the primary) promises only the growth and counts the new size
                Replica larger = new Replica(vol, ObjectId.generate(ObjectId.Kind.SNAPSHOT, "node-1").toString());
                try (var target = mover.beginImport(vol, 2 * size, 2 * size, new AccessType.Block(), "point", Label.NONE, held, larger)) {
                    target.commit();
                }
                assertEquals(2 * size, engine.pool().provisionedBytes());
                // an import abandoned before its commit promises nothing afterwards
                try (var target = mover.beginImport(vol, 2 * size, 2 * size, new AccessType.Block(), "point", Label.NONE, larger,
                        new Replica(vol, ObjectId.generate(ObjectId.Kind.SNAPSHOT, "node-1").toString()))) {
                    target.write(ByteBuffer.wrap(new byte[4096]), 0);
                }
                assertEquals(2 * size, engine.pool().provisionedBytes());
                engine.deleteVolume(vol);
                assertEquals(0, engine.pool().provisionedBytes());
                mover.dropReplicas(vol);
            }
        }
    }
}
