package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.PointCutter;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.testing.LeakCheck;
import java.io.RandomAccessFile;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The ranges an incremental cut found ({@link CutDeltas}) go with their volume: a deleted volume's last cut is not kept
 * for the agent's life (up to {@link CutDeltas#MAX_RANGES} ranges each, for every replicated volume ever deleted).
 * Real XFS reflink pool, a staged ext4 volume cut twice.
 */
@ExtendWith(LeakCheck.class)
class CutDeltasForgetTest {
    private static final long MIB = XfsEngineFixture.MIB;

    @Test
    void aDeletedVolumesCutIsForgotten() throws Exception {
        try (XfsEngineFixture f = new XfsEngineFixture("cut-deltas-forget")) {
            PointCutter cutter = f.engine.capability(PointCutter.class).orElseThrow();
            String vol = f.newVolume(64 * MIB);
            String base = ObjectId.generate(ObjectId.Kind.SNAPSHOT, "node-1").toString();
            String next = ObjectId.generate(ObjectId.Kind.SNAPSHOT, "node-1").toString();
            f.stage(vol);
            try {
                write(f, vol, 1);
                cutter.cutPoint(base, vol, Label.NONE, "");
                write(f, vol, 2);
                cutter.cutPoint(next, vol, Label.NONE, base);   // staged ext4, frozen whole: incremental
            } finally {
                f.node.unstage(vol, f.staging(vol));
            }
            assertTrue(f.engine.cutDeltas().between(base, next).isPresent(), "the incremental cut's ranges are kept");

            f.engine.deleteVolume(vol);
            assertFalse(f.engine.cutDeltas().between(base, next).isPresent(), "forgotten with the volume");
            f.engine.deleteSnapshot(base);
            f.engine.deleteSnapshot(next);
        }
    }

    /** 64 random 4 KiB blocks into the staged volume's file, synced. */
    private static void write(XfsEngineFixture f, String vol, long seed) throws Exception {
        Random random = new Random(seed);
        byte[] block = new byte[4096];
        try (RandomAccessFile file = new RandomAccessFile(f.staging(vol).resolve("data").toFile(), "rw")) {
            for (int i = 0; i < 64; i++) {
                random.nextBytes(block);
                file.seek((long) random.nextInt(2048) * 4096);
                file.write(block);
            }
            file.getFD().sync();
        }
    }
}
