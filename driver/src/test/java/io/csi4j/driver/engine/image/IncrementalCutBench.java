package io.csi4j.driver.engine.image;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.NodeStorage;
import io.csi4j.driver.engine.PointCutter;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.os.ExtentFile;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Not a test: the frozen window of a replication point's cut on an image fragmented by copy-on-write, whole clone vs
 * incremental ({@link IncrementalCut}), on a real XFS reflink pool (root, loop devices, mkfs.xfs needed). A staged
 * 2 GiB ext4 volume holds a 1 GiB file; after a first point, FRAGMENT random 4 KiB writes into the file (fsync every 500)
 * fragment the image and a point is cut; then each step writes its number of random blocks, cuts a point whole and one
 * incrementally since the step's base (order alternating, nothing written between), and the incremental one is the
 * next base. Prints the freezer's cut lines. Build as EngineBench,
 * then {@code java --enable-native-access=ALL-UNNAMED -cp ... io.csi4j.driver.engine.image.IncrementalCutBench [FRAGMENT] [WRITES...]}.
 */
public final class IncrementalCutBench {
    private static final long MIB = 1 << 20;

    public static void main(String[] args) throws Exception {
        int fragment = args.length > 0 ? Integer.parseInt(args[0]) : 60000;
        List<Integer> intervals = args.length > 1
                ? java.util.Arrays.stream(args).skip(1).map(Integer::parseInt).toList() : List.of(500, 2000, 8000, 500);
        int steps = intervals.size();
        List<String> lines = new ArrayList<>();
        Logger logger = Logger.getLogger(ImageFreezer.class.getName());
        logger.setUseParentHandlers(false);
        logger.addHandler(new Handler() {
            @Override public void publish(LogRecord r) { synchronized (lines) { lines.add(r.getMessage()); } }
            @Override public void flush() {}
            @Override public void close() {}
        });
        System.out.printf("IncrementalCutBench: %d random 4 KiB writes to fragment, then steps of %s writes, %d cores%n", fragment,
                intervals, Runtime.getRuntime().availableProcessors());
        try (ScratchFilesystem scratch = ScratchFilesystem.create("xfs", 8L << 30)) {
            Path node = Files.createTempDirectory("csi4j-incremental-bench-");
            Pool pool = Pool.open(new DataDir(scratch.mountPoint().resolve("data")), OptionalLong.empty());
            try (ImageEngine engine = ImageEngine.open(pool, new ImageEngine.Options(1.0, io.csi4j.driver.engine.DataPath.CONFIGURED.volumeDirectIo()))) {
                NodeStorage stage = engine.capability(NodeStorage.class).orElseThrow();
                PointCutter cutter = engine.capability(PointCutter.class).orElseThrow();
                String vol = ObjectId.generate(ObjectId.Kind.VOLUME, "node-1").toString();
                engine.createVolume(vol, 2048 * MIB, AccessType.mount("ext4"), Label.NONE);
                Path staging = node.resolve("staging");
                stage.stage(vol, staging, new StageOptions.Mount("ext4", List.of(), 0));
                List<String> snapshots = new ArrayList<>();
                try {
                    Path file = staging.resolve("data");
                    Random random = new Random(28);
                    byte[] chunk = new byte[(int) MIB];
                    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                        for (int i = 0; i < 1024; i++) {
                            random.nextBytes(chunk);
                            f.write(chunk);
                        }
                        f.getFD().sync();
                    }
                    String base = snapshot();
                    cutter.cutPoint(base, vol, Label.NONE, "");
                    snapshots.add(base);
                    byte[] block = new byte[4096];
                    // copy-on-write after the point: every block first written splits an extent of the image
                    write(file, random, fragment);
                    String fragmented = snapshot();
                    cutter.cutPoint(fragmented, vol, Label.NONE, base);
                    engine.deleteSnapshot(base);
                    snapshots.remove(base);
                    base = fragmented;
                    snapshots.add(base);
                    for (int step = 1; step <= steps; step++) {
                        int writes = intervals.get(step - 1);
                        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                            for (int i = 0; i < writes; i++) {
                                random.nextBytes(block);
                                f.seek((long) random.nextInt(1024 * 256) * 4096);
                                f.write(block);
                                if (i % 500 == 499) f.getFD().sync();
                            }
                            f.getFD().sync();
                        }
                        int extents = extents(engine.images().image(vol));
                        String whole = snapshot();
                        String incremental = snapshot();
                        String since = base;
                        long wholeMs;
                        long incrementalMs;
                        if (step % 2 == 1) {
                            wholeMs = timed(() -> cutter.cutPoint(whole, vol, Label.NONE, ""));
                            incrementalMs = timed(() -> cutter.cutPoint(incremental, vol, Label.NONE, since));
                        } else {
                            incrementalMs = timed(() -> cutter.cutPoint(incremental, vol, Label.NONE, since));
                            wholeMs = timed(() -> cutter.cutPoint(whole, vol, Label.NONE, ""));
                        }
                        System.out.printf("step %d: %d writes since the base, image %d extents; call whole %d ms, incremental %d ms (with the base's reflink before the freeze)%n",
                                step, writes, extents, wholeMs, incrementalMs);
                        synchronized (lines) {
                            lines.stream().skip(Math.max(0, lines.size() - 2)).forEach(l -> System.out.println("  " + l.replace(vol, "vol")));
                        }
                        engine.deleteSnapshot(whole);
                        engine.deleteSnapshot(base);
                        snapshots.remove(base);
                        base = incremental;
                        snapshots.add(incremental);
                    }
                } finally {
                    stage.unstage(vol, staging);
                    for (String s : snapshots) engine.deleteSnapshot(s);
                    engine.deleteVolume(vol);
                    Files.deleteIfExists(staging);
                    Files.deleteIfExists(node);
                }
            }
        }
    }

    /** Random 4 KiB writes into the 1 GiB file, fsync every 500 (CutWindowBench uses it too). */
    static void write(Path file, Random random, int writes) throws java.io.IOException {
        byte[] block = new byte[4096];
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            for (int i = 0; i < writes; i++) {
                random.nextBytes(block);
                f.seek((long) random.nextInt(1024 * 256) * 4096);
                f.write(block);
                if (i % 500 == 499) f.getFD().sync();
            }
            f.getFD().sync();
        }
    }

    static String snapshot() {
        return ObjectId.generate(ObjectId.Kind.SNAPSHOT, "node-1").toString();
    }

    private static long timed(Runnable r) {
        long t = System.nanoTime();
        r.run();
        return (System.nanoTime() - t) / 1_000_000;
    }

    static int extents(Path image) {
        try (ExtentFile f = ExtentFile.open(image)) {
            return f.count();
        }
    }
}
