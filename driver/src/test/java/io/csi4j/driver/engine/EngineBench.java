package io.csi4j.driver.engine;

import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.os.Durable;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import io.csi4j.driver.engine.image.ImageEngine;

/**
 * Not a test: measures the image engine on real pools (root, loop devices, mkfs.xfs needed).
 * Build: {@code ./mvnw -B -q -pl driver -am test-compile dependency:build-classpath
 * -Dmdep.outputFile=target/bench.cp -Dmdep.includeScope=test}, then
 * {@code java --enable-native-access=ALL-UNNAMED -cp driver/target/classes:driver/target/test-classes:$(cat driver/target/bench.cp)
 * io.csi4j.driver.engine.EngineBench}. Prints create+delete of a volume, and a snapshot of a
 * volume holding 1 GiB of data on a reflink (xfs) pool and on a copy (ext4) pool.
 */
public final class EngineBench {
    private static final long MIB = 1 << 20;
    private static final long GIB = 1L << 30;

    public static void main(String[] args) throws Exception {
        int createRounds = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        int snapshotRounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        System.out.printf("EngineBench: %d create+delete rounds, %d snapshot rounds, %d cores%n",
                createRounds, snapshotRounds, Runtime.getRuntime().availableProcessors());
        for (String fs : List.of("xfs", "ext4")) {
            try (ScratchFilesystem scratch = ScratchFilesystem.create(fs, 4 * GIB)) {
                Pool pool = Pool.open(new DataDir(scratch.mountPoint().resolve("data")), OptionalLong.empty());
                try (ImageEngine engine = ImageEngine.open(pool, new ImageEngine.Options(8.0, false))) {
                    System.out.println(pool.describe());
                    createDelete(engine, createRounds);
                    snapshot(engine, pool, fs, snapshotRounds);
                }
            }
        }
    }

    private static void createDelete(ImageEngine engine, int rounds) {
        double[] ms = new double[rounds];
        for (int i = 0; i < rounds + 20; i++) {
            String id = ObjectId.generate(ObjectId.Kind.VOLUME, "bench").toString();
            long start = System.nanoTime();
            engine.createVolume(id, GIB, AccessType.mount("ext4"), Label.NONE);
            engine.deleteVolume(id);
            if (i >= 20) ms[i - 20] = (System.nanoTime() - start) / 1e6; // the first 20 warm the JIT
        }
        System.out.printf("  create+delete of a 1 GiB image volume: %s%n", summary(ms));
    }

    private static void snapshot(ImageEngine engine, Pool pool, String fs, int rounds) throws IOException {
        String vol = ObjectId.generate(ObjectId.Kind.VOLUME, "bench").toString();
        engine.createVolume(vol, GIB + 64 * MIB, AccessType.BLOCK, Label.NONE);
        Path image = pool.path().resolve("volumes/" + vol + ".img");
        long start = System.nanoTime();
        fill(image, GIB);
        System.out.printf("  wrote 1 GiB of incompressible data into the volume in %.0f ms%n", (System.nanoTime() - start) / 1e6);
        double[] ms = new double[rounds];
        List<String> snapshots = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
            String snap = ObjectId.generate(ObjectId.Kind.SNAPSHOT, "bench").toString();
            long before = pool.stats().availableBytes();
            start = System.nanoTime();
            engine.createSnapshot(snap, vol, Label.NONE);
            ms[i] = (System.nanoTime() - start) / 1e6;
            System.out.printf("    snapshot %d: %.1f ms, pool space used %d MiB%n", i + 1, ms[i],
                    (before - pool.stats().availableBytes()) / MIB);
            snapshots.add(snap);
            engine.deleteSnapshot(snap);
        }
        System.out.printf("  snapshot of a volume with 1 GiB written on a %s pool (%s): %s%n", fs,
                pool.reflink() ? "reflink" : "sparse copy", summary(ms));
        engine.deleteVolume(vol);
    }

    private static void fill(Path file, long bytes) throws IOException {
        byte[] chunk = new byte[(int) (4 * MIB)];
        Random random = new Random(1);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            for (long offset = 0; offset < bytes; offset += chunk.length) {
                random.nextBytes(chunk);
                ByteBuffer buffer = ByteBuffer.wrap(chunk);
                while (buffer.hasRemaining()) ch.write(buffer, offset + buffer.position());
            }
        }
        Durable.fsync(file);
    }

    private static String summary(double[] ms) {
        double[] sorted = ms.clone();
        Arrays.sort(sorted);
        return String.format("median %.2f ms, min %.2f ms, max %.2f ms (n=%d)",
                sorted[sorted.length / 2], sorted[0], sorted[sorted.length - 1], sorted.length);
    }

    private EngineBench() {}
}
