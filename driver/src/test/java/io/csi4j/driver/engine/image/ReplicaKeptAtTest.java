package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.DataPath;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.storage.StorageException;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * When a replica was kept, what orders a node's replicas of a volume (the base of a resync by checksums is the newest):
 * the time it was kept, by a handoff's keep or by a round's commit (a hard link of the built image), and unchanged
 * when the volume's image is written afterwards (the image becomes its own file first).
 */
@ExtendWith(LeakCheck.class)
class ReplicaKeptAtTest {
    private static final long MIB = 1 << 20;

    @Test
    void aReplicaIsDatedWhenKeptAndNotByLaterWritesToTheImage() throws Exception {
        ScratchFilesystem.require("xfs");
        try (ScratchFilesystem scratch = ScratchFilesystem.create("xfs", 512 * MIB)) {
            LeakCheck.watch(scratch.dir());
            Pool pool = Pool.open(new DataDir(scratch.mountPoint().resolve("data")), OptionalLong.empty());
            try (ImageEngine engine = ImageEngine.open(pool, new ImageEngine.Options(1.0, DataPath.CONFIGURED.volumeDirectIo()))) {
                DataMover mover = engine.capability(DataMover.class).orElseThrow();
                String vol = ObjectId.generate(ObjectId.Kind.VOLUME, "node-1").toString();
                engine.createVolume(vol, 8 * MIB, new AccessType.Block(), Label.NONE);
                String snap = ObjectId.generate(ObjectId.Kind.SNAPSHOT, "node-1").toString();
                engine.createSnapshot(snap, vol, Label.NONE);

                Instant before = Instant.now();
                Thread.sleep(20);                                   // coarse timestamps: keep the two apart
                assertTrue(mover.keepSnapshotAsReplica(vol, snap));
                Replica first = new Replica(vol, snap);
                Instant firstKept = mover.keptAt(first);
                assertTrue(firstKept.isAfter(before), firstKept + " after " + before);

                // a round's commit keeps the next point as a hard link of the built image, and drops the first
                Thread.sleep(20);
                Replica second = new Replica(vol, ObjectId.generate(ObjectId.Kind.SNAPSHOT, "node-2").toString());
                try (var target = mover.beginImport(vol, 8 * MIB, 8 * MIB, new AccessType.Block(), "point", Label.NONE, first, second)) {
                    target.write(ByteBuffer.wrap(new byte[64 * 1024]), MIB);
                    target.commit();
                }
                assertEquals(List.of(second), mover.replicas());
                Instant secondKept = mover.keptAt(second);
                assertTrue(secondKept.isAfter(firstKept), secondKept + " after " + firstKept);
                var gone = assertThrows(StorageException.class, () -> mover.keptAt(first));
                assertEquals(StorageException.Reason.NOT_FOUND, gone.reason());

                // the image written later (made its own file first, as a stage does): the replica's date stays
                Thread.sleep(20);
                try (RandomAccessFile f = new RandomAccessFile(engine.images().ownImage(vol).toFile(), "rw")) {
                    f.seek(0);
                    f.write(new byte[] {1, 2, 3});
                    f.getFD().sync();
                }
                assertEquals(secondKept, mover.keptAt(second));

                engine.deleteVolume(vol);
                engine.deleteSnapshot(snap);
                mover.dropReplicas(vol);
            }
        }
    }
}
