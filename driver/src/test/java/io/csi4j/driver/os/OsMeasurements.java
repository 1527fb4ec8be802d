package io.csi4j.driver.os;

import io.csi4j.driver.testing.ScratchFilesystem;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;

/**
 * Numbers for the report, not a test: reflink vs real copy of a 512 MiB file, loop attach/detach
 * latency. Run as root after test-compile:
 * {@code java --enable-native-access=ALL-UNNAMED -cp driver/target/classes:driver/target/test-classes io.csi4j.driver.os.OsMeasurements}
 */
public final class OsMeasurements {
    private static final long FILE = 512L << 20;

    public static void main(String[] args) throws Exception {
        for (String fsType : List.of("xfs", "btrfs", "ext4")) copies(fsType);
        loopLatency(50);
    }

    private static void copies(String fsType) throws IOException {
        try (ScratchFilesystem fs = ScratchFilesystem.create(fsType, 3L << 30)) {
            Path src = fs.mountPoint().resolve("src.img");
            writeRandom(src);
            List<Double> reflink = new ArrayList<>();
            List<Double> copy = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                Path dst = fs.mountPoint().resolve("dst.img");
                if (!fsType.equals("ext4")) {
                    long t = System.nanoTime();
                    Reflink.clone(src, dst);
                    Durable.fsync(dst);
                    reflink.add(ms(t));
                    Files.delete(dst);
                }
                if (i < 3) {
                    long t = System.nanoTime();
                    SparseCopy.copy(src, dst);
                    Durable.fsync(dst);
                    copy.add(ms(t));
                    Files.delete(dst);
                    Durable.fsyncDirectory(fs.mountPoint());
                }
            }
            System.out.printf("%-5s 512 MiB: reflink+fsync median %.1f ms %s | SparseCopy+fsync median %.0f ms %s%n",
                    fsType, median(reflink), fmt(reflink), median(copy), fmt(copy));
        }
    }

    private static void loopLatency(int rounds) throws IOException {
        Path dir = Files.createTempDirectory("csi4j-loop-latency");
        Path image = dir.resolve("l.img");
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(1L << 30);
        }
        List<Double> attach = new ArrayList<>();
        List<Double> detach = new ArrayList<>();
        try {
            for (int i = 0; i < rounds; i++) {
                long t = System.nanoTime();
                LoopDevice device;
                try (AttachedLoop loop = LoopDevice.attach(image, EnumSet.noneOf(LoopFlag.class))) {
                    device = loop.device();
                }
                attach.add(ms(t));
                t = System.nanoTime();
                device.detach();
                detach.add(ms(t));
            }
        } finally {
            for (LoopDevice d : LoopDevice.findByBackingFile(image)) d.detach();
            Files.delete(image);
            Files.delete(dir);
        }
        System.out.printf("loop attach (GET_FREE+CONFIGURE+hold/close) x%d: median %.2f ms, p90 %.2f ms, max %.2f ms%n",
                rounds, median(attach), percentile(attach, 0.9), Collections.max(attach));
        System.out.printf("loop detach (CLR_FD + sysfs check) x%d: median %.2f ms, p90 %.2f ms%n",
                rounds, median(detach), percentile(detach, 0.9));
    }

    private static void writeRandom(Path file) throws IOException {
        byte[] chunk = new byte[1 << 20];
        Random random = new Random(42);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (long done = 0; done < FILE; done += chunk.length) {
                random.nextBytes(chunk);
                ch.write(ByteBuffer.wrap(chunk));
            }
            ch.force(true);
        }
    }

    private static double ms(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e6;
    }

    private static double median(List<Double> xs) {
        return xs.isEmpty() ? Double.NaN : percentile(xs, 0.5);
    }

    private static double percentile(List<Double> xs, double p) {
        List<Double> sorted = xs.stream().sorted().toList();
        return sorted.get((int) Math.min(sorted.size() - 1, Math.floor(p * sorted.size())));
    }

    private static String fmt(List<Double> xs) {
        return xs.stream().map(x -> String.format("%.1f", x)).toList().toString();
    }
}
