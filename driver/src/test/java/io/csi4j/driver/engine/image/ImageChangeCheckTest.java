package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.ChangeCheck;
import io.csi4j.driver.engine.DataPath;
import io.csi4j.driver.engine.NodeStorage;
import io.csi4j.driver.engine.PointCutter;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A round keeps the point its secondary holds only when the engine proves the volume unchanged since
 * ({@link ImageChangeCheck}): after a point, an idle unstaged volume is unchanged; one byte written through the
 * volume's device (into data shared with the point, or into a hole) is a change; an attached volume (staged, so a
 * writer may be at work) is never unchanged; nor is a volume grown since, nor against a point of another volume or
 * none. Real XFS reflink pool, real loop devices.
 */
@ExtendWith(LeakCheck.class)
class ImageChangeCheckTest {
    private static final long MIB = 1 << 20;
    private static final StageOptions.Mount EXT4 = new StageOptions.Mount("ext4", List.of(), 0);

    @Test
    void onlyAnUnattachedVolumeWhoseExtentsAreThePointsIsUnchanged() throws Exception {
        ScratchFilesystem.require("xfs");
        try (ScratchFilesystem scratch = ScratchFilesystem.create("xfs", 512 * MIB)) {
            LeakCheck.watch(scratch.dir());
            Path node = LeakCheck.temporaryDirectory("csi4j-change-check-");
            Pool pool = Pool.open(new DataDir(scratch.mountPoint().resolve("data")), OptionalLong.empty());
            try (ImageEngine engine = ImageEngine.open(pool, new ImageEngine.Options(1.0, DataPath.CONFIGURED.volumeDirectIo()))) {
                NodeStorage stage = engine.capability(NodeStorage.class).orElseThrow();
                PointCutter cutter = engine.capability(PointCutter.class).orElseThrow();
                ChangeCheck check = engine.capability(ChangeCheck.class).orElseThrow();
                String vol = id(ObjectId.Kind.VOLUME);
                engine.createVolume(vol, 32 * MIB, new AccessType.Block(), Label.NONE);
                Path image = engine.images().image(vol);
                Path staging = node.resolve("staging-" + vol);
                byte[] data = new byte[4 * (int) MIB];
                new Random(28).nextBytes(data);
                writeThroughDevice(stage, vol, image, staging, 0, data);

                String p1 = id(ObjectId.Kind.SNAPSHOT);
                cutter.cutPoint(p1, vol, Label.NONE, "");
                assertTrue(check.unchangedSince(vol, p1), "an idle volume right after its point");
                assertTrue(check.unchangedSince(vol, p1), "asked again: still");
                assertFalse(check.unchangedSince(vol, id(ObjectId.Kind.SNAPSHOT)), "a point that does not exist");
                assertFalse(check.unchangedSince(vol, ""), "no point");

                // attached: a writer may be at work, whatever the extents say now
                stage.stage(vol, staging, new StageOptions.Block(0));
                try {
                    assertFalse(check.unchangedSince(vol, p1), "staged (attached) is never unchanged");
                } finally {
                    stage.unstage(vol, staging);
                }
                assertTrue(check.unchangedSince(vol, p1), "a stage that wrote nothing changed nothing");

                // one byte into data the point shares: copy-on-write moves that block
                writeThroughDevice(stage, vol, image, staging, MIB + 17, new byte[] {42});
                assertFalse(check.unchangedSince(vol, p1), "one byte written over shared data after the point");
                String p2 = id(ObjectId.Kind.SNAPSHOT);
                cutter.cutPoint(p2, vol, Label.NONE, p1);
                assertTrue(check.unchangedSince(vol, p2), "the next point holds it");
                assertFalse(check.unchangedSince(vol, p1), "the older point still differs");

                // one byte into a hole of the point: a new extent
                writeThroughDevice(stage, vol, image, staging, 20 * MIB + 3, new byte[] {7});
                assertFalse(check.unchangedSince(vol, p2), "one byte written into a hole after the point");
                String p3 = id(ObjectId.Kind.SNAPSHOT);
                cutter.cutPoint(p3, vol, Label.NONE, p2);
                assertTrue(check.unchangedSince(vol, p3));

                // grown since the point: not the point's size
                engine.expandVolume(vol, 48 * MIB);
                assertFalse(check.unchangedSince(vol, p3), "expanded after the point");

                // another volume's point is not this volume's
                String other = id(ObjectId.Kind.VOLUME);
                engine.createVolume(other, 48 * MIB, new AccessType.Block(), Label.NONE);
                String p4 = id(ObjectId.Kind.SNAPSHOT);
                cutter.cutPoint(p4, other, Label.NONE, "");
                assertFalse(check.unchangedSince(vol, p4), "a point of another volume");
                assertTrue(check.unchangedSince(other, p4));

                // a staged filesystem: attached, never unchanged (its freeze and thaw write its superblock anyway)
                String fs = id(ObjectId.Kind.VOLUME);
                engine.createVolume(fs, 64 * MIB, AccessType.mount("ext4"), Label.NONE);
                Path fsStaging = node.resolve("staging-" + fs);
                stage.stage(fs, fsStaging, EXT4);
                String p5 = id(ObjectId.Kind.SNAPSHOT);
                try {
                    cutter.cutPoint(p5, fs, Label.NONE, "");
                    assertFalse(check.unchangedSince(fs, p5), "a staged filesystem");
                } finally {
                    stage.unstage(fs, fsStaging);
                }

                for (String s : List.of(p1, p2, p3, p4, p5)) engine.deleteSnapshot(s);
                for (String v : List.of(vol, other, fs)) engine.deleteVolume(v);
            }
        }
    }

    /** Stages the volume as a block device, writes {@code bytes} at {@code offset} through it with a sync, unstages. */
    private static void writeThroughDevice(NodeStorage stage, String vol, Path image, Path staging, long offset, byte[] bytes) throws Exception {
        stage.stage(vol, staging, new StageOptions.Block(0));
        try {
            Path device = LoopDevice.findUsingCanonicalPath(image).getFirst().node();
            try (RandomAccessFile f = new RandomAccessFile(device.toFile(), "rw")) {
                f.seek(offset);
                f.write(bytes);
                f.getFD().sync();
            }
        } finally {
            stage.unstage(vol, staging);
        }
    }

    private static String id(ObjectId.Kind kind) {
        return ObjectId.generate(kind, "node-1").toString();
    }
}
