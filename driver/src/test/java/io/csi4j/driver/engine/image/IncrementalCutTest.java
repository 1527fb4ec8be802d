package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.DataPath;
import io.csi4j.driver.engine.NodeStorage;
import io.csi4j.driver.engine.PointCutter;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.os.ExtentFile;
import io.csi4j.driver.os.Fallocate;
import io.csi4j.driver.os.Reflink;
import io.csi4j.driver.os.Trim;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A replication point cut as the base its secondary holds plus what changed ({@link IncrementalCut}): on an image
 * fragmented by copy-on-write after the base (random 4 KiB writes) with ranges trimmed away, the incremental cut holds
 * byte for byte what a whole clone made in the same freeze holds; the engine's point cut goes that way for a staged
 * filesystem volume and takes the whole clone when there is no base, the volume is a block volume, or is not staged.
 */
@ExtendWith(LeakCheck.class)
class IncrementalCutTest {
    private static final long MIB = 1 << 20;
    private static final int BLOCK = 4096;
    private static final StageOptions.Mount EXT4 = new StageOptions.Mount("ext4", List.of(), 0);

    private final List<String> lines = new ArrayList<>();
    private final Handler capture = new Handler() {
        @Override public void publish(LogRecord r) {
            synchronized (lines) { lines.add(r.getMessage() != null ? r.getMessage() : ""); }
        }
        @Override public void flush() {}
        @Override public void close() {}
    };

    @Test
    void aFragmentedStagedVolumeIsCutIncrementallyAndHoldsWhatAWholeCloneHolds() throws Exception {
        ScratchFilesystem.require("xfs");
        Logger logger = Logger.getLogger(ImageFreezer.class.getName());
        logger.addHandler(capture);
        try (ScratchFilesystem scratch = ScratchFilesystem.create("xfs", 1024 * MIB)) {
            LeakCheck.watch(scratch.dir());
            Path node = LeakCheck.temporaryDirectory("csi4j-incremental-cut-");
            Pool pool = Pool.open(new DataDir(scratch.mountPoint().resolve("data")), OptionalLong.empty());
            try (ImageEngine engine = ImageEngine.open(pool, new ImageEngine.Options(1.0, DataPath.CONFIGURED.volumeDirectIo()))) {
                NodeStorage stage = engine.capability(NodeStorage.class).orElseThrow();
                PointCutter cutter = engine.capability(PointCutter.class).orElseThrow();
                String vol = id(ObjectId.Kind.VOLUME);
                engine.createVolume(vol, 256 * MIB, AccessType.mount("ext4"), Label.NONE);
                Path staging = node.resolve("staging-" + vol);
                stage.stage(vol, staging, EXT4);
                String base = id(ObjectId.Kind.SNAPSHOT);
                String next = id(ObjectId.Kind.SNAPSHOT);
                byte[] model = new byte[64 * (int) MIB];
                try {
                    Path file = staging.resolve("data");
                    Random random = new Random(28);
                    random.nextBytes(model);
                    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                        f.write(model);
                        f.getFD().sync();
                    }
                    cutter.cutPoint(base, vol, Label.NONE, "");
                    assertTrue(cutLine(vol).contains("whole clone (no base)"), "no base: a whole clone: " + cutLine(vol));

                    // copy-on-write splits an extent of the image for every 4 KiB written after the point
                    Path image = engine.images().image(vol);
                    int extentsBefore = extents(image);
                    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                        byte[] block = new byte[BLOCK];
                        for (int i = 0; i < 3000; i++) {
                            random.nextBytes(block);
                            int at = random.nextInt(model.length / BLOCK) * BLOCK;
                            f.seek(at);
                            f.write(block);
                            System.arraycopy(block, 0, model, at, BLOCK);
                            if (i % 100 == 99) f.getFD().sync();
                        }
                        f.getFD().sync();
                    }
                    // ranges that held data in the point are holes in the image now: punched, trimmed through the loop
                    for (long at : new long[] {8 * MIB, 40 * MIB + 3 * BLOCK}) {
                        Fallocate.punchHole(file, at, 2 * MIB);
                        java.util.Arrays.fill(model, (int) at, (int) (at + 2 * MIB), (byte) 0);
                    }
                    Files.write(staging.resolve("synced"), new byte[] {1});
                    try (RandomAccessFile f = new RandomAccessFile(staging.resolve("synced").toFile(), "rw")) { f.getFD().sync(); }
                    long allocated = Fallocate.allocatedBytes(image);
                    Trim.filesystem(staging);
                    // the trimmed ranges are holes of the image where the point holds data: the case a hole must stay a hole
                    assertTrue(Fallocate.allocatedBytes(image) <= allocated - 2 * MIB,
                            "the trim punched the image: " + allocated + " -> " + Fallocate.allocatedBytes(image));
                    int extentsAfter = extents(image);
                    assertTrue(extentsAfter > extentsBefore + 1000, "fragmented: " + extentsBefore + " -> " + extentsAfter + " extents");

                    // the engine's cut of the next point: incremental since the base
                    // from a virtual thread, as the agents serve calls
                    onVirtualThread(() -> cutter.cutPoint(next, vol, Label.NONE, base));
                    assertTrue(cutLine(vol).contains("incremental since " + base), cutLine(vol));
                    // the freeze's work ran real-time (root here: CAP_SYS_NICE; on a platform thread of its own), so the
                    // walk inside waits for no CPU
                    assertTrue(cutLine(vol).endsWith("; at real-time"), cutLine(vol));

                    // the same rule and a whole clone of the image in one freeze: byte for byte the same
                    Path incremental = engine.images().layout().temporary(id(ObjectId.Kind.SNAPSHOT), ".img");
                    Path whole = engine.images().layout().temporary(id(ObjectId.Kind.SNAPSHOT), ".img");
                    try {
                        IncrementalCut cut = IncrementalCut.prepare(engine.images(), vol, next, incremental);
                        String[] how = {""};
                        new ImageFreezer(engine.images()).cut(List.of(vol), frozen -> {
                            assertTrue(frozen.contains(vol), "a staged filesystem volume is frozen whole");
                            how[0] = cut.cut(true, () -> { throw new AssertionError("fell back to a whole clone"); });
                            Reflink.clone(image, whole);
                            return how[0];
                        });
                        assertTrue(how[0].startsWith("incremental since " + next), how[0]);
                        assertEquals(Files.size(whole), Files.size(incremental));
                        assertEquals(-1L, Files.mismatch(whole, incremental), "the incremental cut holds what the whole clone holds");
                    } finally {
                        Files.deleteIfExists(incremental);
                        Files.deleteIfExists(whole);
                    }
                } finally {
                    stage.unstage(vol, staging);
                }

                // what the engine's incremental point holds: the file as written, the punched ranges zeros
                String restored = id(ObjectId.Kind.VOLUME);
                engine.restoreSnapshot(restored, next, 0, AccessType.mount("ext4"), Label.NONE);
                Path restoredStaging = node.resolve("staging-" + restored);
                stage.stage(restored, restoredStaging, EXT4);
                try {
                    assertArrayEquals(model, Files.readAllBytes(restoredStaging.resolve("data")),
                            "the incremental point holds the file as written, its punched ranges zeros");
                } finally {
                    stage.unstage(restored, restoredStaging);
                    engine.deleteVolume(restored);
                }

                // not staged: nothing stops a writer, so a whole clone
                String third = id(ObjectId.Kind.SNAPSHOT);
                cutter.cutPoint(third, vol, Label.NONE, next);
                assertTrue(cutLine(vol).contains("whole clone (not a frozen filesystem"), cutLine(vol));

                engine.deleteSnapshot(base);
                engine.deleteSnapshot(next);
                engine.deleteSnapshot(third);
                engine.deleteVolume(vol);

                // a block volume: its writer is never stopped (a range-wise copy would tear), so a whole clone
                String block = id(ObjectId.Kind.VOLUME);
                engine.createVolume(block, 32 * MIB, new AccessType.Block(), Label.NONE);
                Path blockStaging = node.resolve("staging-" + block);
                stage.stage(block, blockStaging, new StageOptions.Block(0));
                String blockBase = id(ObjectId.Kind.SNAPSHOT);
                String blockNext = id(ObjectId.Kind.SNAPSHOT);
                try {
                    cutter.cutPoint(blockBase, block, Label.NONE, "");
                    cutter.cutPoint(blockNext, block, Label.NONE, blockBase);
                    assertTrue(cutLine(block).contains("whole clone (not a frozen filesystem"), cutLine(block));
                } finally {
                    stage.unstage(block, blockStaging);
                }
                engine.deleteSnapshot(blockBase);
                engine.deleteSnapshot(blockNext);
                engine.deleteVolume(block);
                assertEquals(List.of(), leftovers(engine));
            }
        } finally {
            logger.removeHandler(capture);
        }
    }

    @Test
    void aTwoPassCutUnderAWriterHoldsWhatAWholeCloneHoldsAndItsDeltaHoldsEveryChange() throws Exception {
        ScratchFilesystem.require("xfs");
        try (ScratchFilesystem scratch = ScratchFilesystem.create("xfs", 1024 * MIB)) {
            LeakCheck.watch(scratch.dir());
            Path node = LeakCheck.temporaryDirectory("csi4j-two-pass-cut-");
            Pool pool = Pool.open(new DataDir(scratch.mountPoint().resolve("data")), OptionalLong.empty());
            try (ImageEngine engine = ImageEngine.open(pool, new ImageEngine.Options(1.0, DataPath.CONFIGURED.volumeDirectIo()))) {
                NodeStorage stage = engine.capability(NodeStorage.class).orElseThrow();
                PointCutter cutter = engine.capability(PointCutter.class).orElseThrow();
                String vol = id(ObjectId.Kind.VOLUME);
                engine.createVolume(vol, 256 * MIB, AccessType.mount("ext4"), Label.NONE);
                Path staging = node.resolve("staging-" + vol);
                stage.stage(vol, staging, EXT4);
                String base = id(ObjectId.Kind.SNAPSHOT);
                Path image = engine.images().image(vol);
                Path twoPass = engine.images().layout().temporary(id(ObjectId.Kind.SNAPSHOT), ".img");
                Path whole = engine.images().layout().temporary(id(ObjectId.Kind.SNAPSHOT), ".img");
                Path file = staging.resolve("data");
                Random random = new Random(29);
                AtomicLong written = new AtomicLong();
                AtomicBoolean stop = new AtomicBoolean();
                Thread writer = null;
                try {
                    byte[] bytes = new byte[64 * (int) MIB];
                    random.nextBytes(bytes);
                    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                        f.write(bytes);
                        f.getFD().sync();
                    }
                    cutter.cutPoint(base, vol, Label.NONE, "");
                    writeRandomBlocks(file, random, 2000);   // what the first pass finds changed since the base

                    // random 4 KiB writes, each synced (O_DSYNC), all through the first pass and into the freeze
                    writer = Thread.ofPlatform().name("two-pass-writer").start(() -> {
                        Random r = new Random(30);
                        byte[] block = new byte[BLOCK];
                        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rwd")) {
                            while (!stop.get()) {
                                r.nextBytes(block);
                                f.seek((long) r.nextInt(bytes.length / BLOCK) * BLOCK);
                                f.write(block);
                                written.incrementAndGet();
                            }
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    });
                    awaitWrites(written, 20);
                    long beforeFirstPass = written.get();
                    IncrementalCut cut = IncrementalCut.prepare(engine.images(), vol, base, twoPass);
                    long afterFirstPass = written.get();
                    awaitWrites(written, afterFirstPass + 20);   // changed since the first pass: the freeze's to clone
                    String[] how = {""};
                    new ImageFreezer(engine.images()).cut(List.of(vol), frozen -> {
                        assertTrue(frozen.contains(vol), "a staged filesystem volume is frozen whole");
                        how[0] = cut.cut(true, () -> { throw new AssertionError("fell back to a whole clone"); });
                        Reflink.clone(image, whole);
                        return how[0];
                    });
                    assertTrue(afterFirstPass > beforeFirstPass, "the writer wrote during the first pass: " + beforeFirstPass + " -> " + afterFirstPass);
                    var passes = TWO_PASSES.matcher(how[0]);
                    assertTrue(passes.find(), how[0]);
                    assertTrue(Long.parseLong(passes.group(1)) > 0, "the freeze cloned what changed after the first pass: " + how[0]);
                    assertTrue(Long.parseLong(passes.group(2)) > 1000, "the first pass cloned what changed since the base: " + how[0]);
                    assertEquals(Files.size(whole), Files.size(twoPass));
                    assertEquals(-1L, Files.mismatch(whole, twoPass), "the two-pass cut holds what the whole clone holds");

                    // the delta (both passes' ranges joined) covers every block where the new point differs from the base
                    List<RangeCursor.Range> delta = cut.delta("next", Files.size(twoPass)).orElseThrow().ranges();
                    for (int i = 1; i < delta.size(); i++) {
                        assertTrue(delta.get(i - 1).end() < delta.get(i).offset(), "ascending, none touching: " + delta.get(i - 1) + ", " + delta.get(i));
                    }
                    List<Long> differing = differingBlocks(engine.images().snapshotImage(base), twoPass);
                    assertTrue(differing.size() > 1500, "the writes changed blocks: " + differing.size());
                    for (long at : differing) {
                        assertTrue(covers(delta, at, BLOCK), "block at " + at + " differs from the base and lies in the delta " + how[0]);
                    }
                } finally {
                    stop.set(true);
                    if (writer != null) writer.join();
                    Files.deleteIfExists(twoPass);
                    Files.deleteIfExists(whole);
                    stage.unstage(vol, staging);
                }
                engine.deleteSnapshot(base);
                engine.deleteVolume(vol);
                assertEquals(List.of(), leftovers(engine));
            }
        }
    }

    /** The ranges cloned inside the freeze and before it, in a two-pass cut's line. */
    private static final java.util.regex.Pattern TWO_PASSES = java.util.regex.Pattern.compile(
            "incremental since \\S+: (\\d+) ranges, .* inside the freeze; before the freeze [0-9.]+ ms: (\\d+) ranges");

    private static void onVirtualThread(Runnable r) throws InterruptedException {
        Throwable[] failure = new Throwable[1];
        Thread.ofVirtual().start(() -> {
            try {
                r.run();
            } catch (Throwable e) {
                failure[0] = e;
            }
        }).join();
        if (failure[0] != null) throw new AssertionError(failure[0]);
    }

    private static void writeRandomBlocks(Path file, Random random, int count) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            byte[] block = new byte[BLOCK];
            long blocks = f.length() / BLOCK;
            for (int i = 0; i < count; i++) {
                random.nextBytes(block);
                f.seek(random.nextLong(blocks) * BLOCK);
                f.write(block);
                if (i % 100 == 99) f.getFD().sync();
            }
            f.getFD().sync();
        }
    }

    private static void awaitWrites(AtomicLong written, long atLeast) throws InterruptedException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (written.get() < atLeast) {
            assertTrue(System.nanoTime() < deadline, "the writer wrote " + written.get() + " blocks, not " + atLeast);
            Thread.sleep(5);
        }
    }

    /** The offsets of the 4 KiB blocks where the two files differ. */
    private static List<Long> differingBlocks(Path a, Path b) throws IOException {
        List<Long> differ = new ArrayList<>();
        try (var fa = java.nio.channels.FileChannel.open(a); var fb = java.nio.channels.FileChannel.open(b)) {
            assertEquals(fa.size(), fb.size());
            var ba = java.nio.ByteBuffer.allocate((int) MIB);
            var bb = java.nio.ByteBuffer.allocate((int) MIB);
            for (long at = 0; at < fa.size(); at += MIB) {
                ba.clear();
                bb.clear();
                while (ba.hasRemaining() && fa.read(ba, at + ba.position()) > 0) { }
                while (bb.hasRemaining() && fb.read(bb, at + bb.position()) > 0) { }
                for (int i = 0; i < ba.position(); i += BLOCK) {
                    if (!java.util.Arrays.equals(ba.array(), i, i + BLOCK, bb.array(), i, i + BLOCK)) differ.add(at + i);
                }
            }
        }
        return differ;
    }

    private static boolean covers(List<RangeCursor.Range> ranges, long at, long length) {
        return ranges.stream().anyMatch(r -> r.offset() <= at && at + length <= r.end());
    }

    /** What is left in the pool's .tmp: nothing after the cuts, incremental or whole. */
    private static List<String> leftovers(ImageEngine engine) throws IOException {
        Path tmp = engine.images().layout().temporary("x", ".img").getParent();
        try (var entries = Files.list(tmp)) {
            return entries.map(p -> p.getFileName().toString()).toList();
        }
    }

    private static int extents(Path image) {
        try (ExtentFile f = ExtentFile.open(image)) {
            return f.count();
        }
    }

    private String cutLine(String vol) {
        synchronized (lines) {
            return lines.reversed().stream().filter(l -> l.startsWith("cut of [" + vol + "]")).findFirst().orElse("none: " + lines);
        }
    }

    private static String id(ObjectId.Kind kind) {
        return ObjectId.generate(kind, "node-1").toString();
    }
}
