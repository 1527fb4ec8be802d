package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.DataPath;
import io.csi4j.driver.engine.NodeStorage;
import io.csi4j.driver.engine.PointCutter;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.engine.SnapshotRanges;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.os.ExtentFile;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The sender's delta between a point and the next one cut incrementally from it is the ranges the cut found
 * ({@link CutDeltas}): the very ranges a walk of both points' extent maps gives, and the base with those ranges taken
 * from the new point is the new point byte for byte. Real XFS reflink pool, a staged ext4 volume written with random
 * 4 KiB writes between the cuts.
 */
@ExtendWith(LeakCheck.class)
class CutDeltasTest {
    private static final long MIB = 1 << 20;
    private static final StageOptions.Mount EXT4 = new StageOptions.Mount("ext4", List.of(), 0);

    @Test
    void theSendersDeltaOfAnIncrementalCutIsWhatAWalkOfBothPointsFinds() throws Exception {
        ScratchFilesystem.require("xfs");
        try (ScratchFilesystem scratch = ScratchFilesystem.create("xfs", 512 * MIB)) {
            LeakCheck.watch(scratch.dir());
            Path node = LeakCheck.temporaryDirectory("csi4j-cut-deltas-");
            Pool pool = Pool.open(new DataDir(scratch.mountPoint().resolve("data")), OptionalLong.empty());
            try (ImageEngine engine = ImageEngine.open(pool, new ImageEngine.Options(1.0, DataPath.CONFIGURED.volumeDirectIo()))) {
                NodeStorage stage = engine.capability(NodeStorage.class).orElseThrow();
                PointCutter cutter = engine.capability(PointCutter.class).orElseThrow();
                SnapshotRanges maps = engine.capability(SnapshotRanges.class).orElseThrow();
                String vol = id(ObjectId.Kind.VOLUME);
                engine.createVolume(vol, 128 * MIB, AccessType.mount("ext4"), Label.NONE);
                Path staging = node.resolve("staging-" + vol);
                stage.stage(vol, staging, EXT4);
                String base = id(ObjectId.Kind.SNAPSHOT);
                String next = id(ObjectId.Kind.SNAPSHOT);
                try {
                    Path file = staging.resolve("data");
                    Random random = new Random(28);
                    byte[] bytes = new byte[32 * (int) MIB];
                    random.nextBytes(bytes);
                    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                        f.write(bytes);
                        f.getFD().sync();
                    }
                    cutter.cutPoint(base, vol, Label.NONE, "");
                    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                        byte[] block = new byte[4096];
                        for (int i = 0; i < 400; i++) {
                            random.nextBytes(block);
                            f.seek((long) random.nextInt(bytes.length / 4096) * 4096);
                            f.write(block);
                        }
                        f.getFD().sync();
                    }
                    cutter.cutPoint(next, vol, Label.NONE, base);
                } finally {
                    stage.unstage(vol, staging);
                }
                Path baseImage = engine.images().snapshotImage(base);
                Path nextImage = engine.images().snapshotImage(next);
                assertTrue(engine.cutDeltas().between(base, next).isPresent(), "the incremental cut's ranges are kept");
                List<RangeCursor.Range> remembered = all(maps.changedRanges(base, next, 0, () -> false));
                List<RangeCursor.Range> walked;
                try (var walk = new SharedExtentDelta(ExtentFile.open(baseImage), ExtentFile.open(nextImage), 0, () -> false)) {
                    walked = all(walk);
                }
                assertTrue(remembered.size() > 100, "the 400 writes are in the delta: " + remembered.size());
                assertEquals(walked, remembered, "the cut's ranges are the walk's");

                // the base with those ranges taken from the new point is the new point
                byte[] rebuilt = Files.readAllBytes(baseImage);
                byte[] target = Files.readAllBytes(nextImage);
                for (RangeCursor.Range r : remembered) System.arraycopy(target, (int) r.offset(), rebuilt, (int) r.offset(), (int) r.length());
                assertArrayEquals(target, rebuilt, "base + the delta = the new point");

                // from an offset: only what lies beyond it
                long from = remembered.get(remembered.size() / 2).offset() + 1;
                List<RangeCursor.Range> tail = all(maps.changedRanges(base, next, from, () -> false));
                assertEquals(from, tail.getFirst().offset());
                assertEquals(remembered.getLast(), tail.getLast());

                engine.deleteSnapshot(base);
                assertThrows(RuntimeException.class, () -> maps.changedRanges(base, next, 0, () -> false), "a deleted base: NOT_FOUND");
                engine.deleteSnapshot(next);
                engine.deleteVolume(vol);
            }
        }
    }

    private static List<RangeCursor.Range> all(RangeCursor cursor) {
        List<RangeCursor.Range> all = new ArrayList<>();
        try (cursor) {
            for (RangeCursor.Range r = cursor.next(); r != null; r = cursor.next()) all.add(r);
        }
        return all;
    }

    private static String id(ObjectId.Kind kind) {
        return ObjectId.generate(kind, "node-1").toString();
    }
}
