package io.csi4j.driver.engine;

import static io.csi4j.driver.engine.ImageEngineLifecycleTest.snapshotId;
import static io.csi4j.driver.engine.ImageEngineLifecycleTest.volumeId;
import static io.csi4j.driver.engine.TestPool.node;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.image.ImageEngine;
import io.csi4j.driver.testing.LeakCheck;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The cut of a staged volume: what was written before the cut, never fsynced, is in the snapshot (FIFREEZE's flush),
 * what was written after is not, and the cut says how long it held the volume's writes and what of that was the
 * freeze with its flush, the clone and the thaw (docs/data-path.md, section 7, reads these lines).
 */
@ExtendWith(LeakCheck.class)
class CutWindowTest {
    private static final long MIB = 1 << 20;
    private static final StageOptions.Mount EXT4 = new StageOptions.Mount("ext4", List.of(), 0);
    private static final Pattern LINE = Pattern.compile(
            "cut of \\[(\\S+)\\]: writes held ([0-9.]+) ms \\(freeze and flush ([0-9.]+) ms, clone ([0-9.]+) ms, thaw ([0-9.]+) ms\\)");

    @Test
    void unsyncedWritesBeforeTheCutAreInItAndTheHeldWindowIsLogged() throws Exception {
        List<String> lines = new ArrayList<>();
        Handler capture = new Handler() {
            @Override public void publish(LogRecord r) {
                synchronized (lines) { lines.add(r.getMessage() != null ? r.getMessage() : ""); }
            }
            @Override public void flush() {}
            @Override public void close() {}
        };
        Logger logger = Logger.getLogger("io.csi4j.driver.engine.image.ImageFreezer");
        logger.addHandler(capture);
        try (TestPool test = TestPool.create("xfs", 1024 * MIB); ImageEngine engine = test.imageEngine(1.0)) {
            String vol = volumeId();
            engine.createVolume(vol, 128 * MIB, AccessType.mount("ext4"), Label.NONE);
            node(engine).stage(vol, test.staging(vol), EXT4);
            byte[] data = new byte[16 * (int) MIB];
            new Random(28).nextBytes(data);
            try {
                // buffered, no fsync: dirty in the page cache until FIFREEZE flushes it
                try (FileChannel ch = FileChannel.open(test.staging(vol).resolve("data"), StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE)) {
                    ch.write(ByteBuffer.wrap(data));
                }
                String snap = snapshotId();
                engine.createSnapshot(snap, vol, Label.NONE);
                // the volume keeps changing after the cut: none of it may reach the snapshot
                Files.write(test.staging(vol).resolve("data"), new byte[] {1, 2, 3});

                String restored = volumeId();
                engine.restoreSnapshot(restored, snap, 0, AccessType.mount("ext4"), Label.NONE);
                node(engine).stage(restored, test.staging(restored), EXT4);
                try {
                    assertArrayEquals(data, Files.readAllBytes(test.staging(restored).resolve("data")),
                            "the snapshot holds what was written before its cut, unsynced, and nothing after");
                } finally {
                    node(engine).unstage(restored, test.staging(restored));
                    engine.deleteVolume(restored);
                }
                engine.deleteSnapshot(snap);
            } finally {
                node(engine).unstage(vol, test.staging(vol));
                engine.deleteVolume(vol);
            }
            List<String> cuts;
            synchronized (lines) { cuts = lines.stream().filter(l -> l.contains("cut of [" + vol + "]")).toList(); }
            assertEquals(1, cuts.size(), "one line for the one cut of the staged volume: " + lines);
            var m = LINE.matcher(cuts.getFirst());
            assertTrue(m.find(), cuts.getFirst());
            double held = Double.parseDouble(m.group(2)), parts = Double.parseDouble(m.group(3)) + Double.parseDouble(m.group(4))
                    + Double.parseDouble(m.group(5));
            assertTrue(held > 0 && Math.abs(held - parts) < 1.0, "held = freeze + clone + thaw: " + cuts.getFirst());
            assertEquals(List.of(), test.leftovers());
        } finally {
            logger.removeHandler(capture);
        }
    }
}
