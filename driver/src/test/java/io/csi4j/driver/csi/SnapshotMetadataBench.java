package io.csi4j.driver.csi;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.plugin.Driver;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.GetMetadataAllocatedRequest;
import io.csi4j.proto.csi.GetMetadataDeltaRequest;
import io.csi4j.proto.csi.SnapshotMetadataGrpc;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.PluginServer;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Not a test: times SnapshotMetadata over the plugin's real UNIX socket (client and plugin in one JVM), on an
 * XFS reflink pool image. (1) GetMetadataDelta of two snapshots of a 10 GiB volume written in full, 1% of it
 * (6,400 random 16 KiB blocks) rewritten between the two; (2) GetMetadataAllocated of a 100 GiB sparse volume
 * with 1 GiB written (16,384 random 64 KiB blocks). Data is written straight into the volume's image file
 * (what a loop device would do, without one). Each call is timed end to end: first the stream's start, then
 * every message read. Usage: SnapshotMetadataBench DIR [RUNS]
 */
public final class SnapshotMetadataBench {
    private static final long MIB = 1L << 20;
    private static final long GIB = 1L << 30;

    public static void main(String[] args) throws Exception {
        Path root = Path.of(args[0]);
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        DriverConfig d = DriverConfig.defaults(root.resolve("data"), "bench");
        // a thin pool: the 100 GiB volume is promised, not written
        var config = new DriverConfig(d.dataDir(), d.nodeId(), d.engine(), OptionalLong.of(24 * GIB), d.mode(),
                d.maxVolumesPerNode(), d.defaultVolumeBytes(), 8.0, d.groupDeletePolicy(), d.oneGroupPerVolume(), d.maxGroupMembers());
        Path socket = root.resolve("csi.sock");
        try (Driver driver = Driver.open(config)) {
            PluginServer server = PluginServer.builder().listen(Endpoint.parse("unix://" + socket),
                    driver.csiServices().toArray(io.grpc.BindableService[]::new)).build().start();
            ManagedChannel channel = Channels.connect(Endpoint.parse("unix://" + socket));
            try {
                Path pool = driver.engine().pool().path();
                System.out.println("pool: " + driver.engine().pool().filesystem() + ", reflink=" + driver.engine().pool().reflink()
                        + "; " + Runtime.getRuntime().availableProcessors() + " cores");
                delta(channel, pool, runs, driver);
                allocated(channel, pool, runs);
            } finally {
                channel.shutdownNow();
                server.shutdownNow();
                server.close();
            }
        } finally {
            Pool.uninstall(config.layout());
        }
    }

    private static void delta(ManagedChannel channel, Path pool, int runs, Driver driver) throws IOException {
        String volume = volume(channel, "delta-10g", 10 * GIB);
        Path image = pool.resolve("volumes").resolve(volume + ".img");
        long t0 = System.nanoTime();
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.WRITE)) {
            ByteBuffer chunk = ByteBuffer.allocateDirect((int) (4 * MIB));
            Random random = new Random(1);
            byte[] bytes = new byte[chunk.capacity()];
            random.nextBytes(bytes);
            chunk.put(bytes);
            for (long at = 0; at < 10 * GIB; at += chunk.capacity()) {
                chunk.rewind();
                chunk.putLong(0, at);   // no two chunks alike
                while (chunk.hasRemaining()) ch.write(chunk, at + chunk.position());
            }
            ch.force(true);
        }
        System.out.printf(Locale.ROOT, "setup: wrote 10 GiB in %.1f s%n", (System.nanoTime() - t0) / 1e9);
        String base = snapshot(channel, "delta-a", volume);
        long changed = rewrite(image, 10 * GIB, 16 * 1024, 6400, 2);
        String target = snapshot(channel, "delta-b", volume);
        System.out.printf(Locale.ROOT, "setup: rewrote %d random 16 KiB blocks (%.2f%% of 10 GiB)%n", 6400, 100.0 * changed / (10 * GIB));
        var stub = SnapshotMetadataGrpc.newBlockingStub(channel);
        report("GetMetadataDelta, 10 GiB volume, 1% changed", runs, () -> {
            long[] totals = new long[2];
            stub.withDeadlineAfter(10, TimeUnit.MINUTES).getMetadataDelta(GetMetadataDeltaRequest.newBuilder()
                    .setBaseSnapshotId(base).setTargetSnapshotId(target).build()).forEachRemaining(m -> {
                        totals[0] += m.getBlockMetadataCount();
                        m.getBlockMetadataList().forEach(b -> totals[1] += b.getSizeBytes());
                    });
            return totals;
        });
        System.out.println("  method: shared_extents calls=" + driver.snapshotBlocks().calls(io.csi4j.driver.engine.RangeCursor.Method.SHARED_EXTENTS)
                + ", data_comparison calls=" + driver.snapshotBlocks().calls(io.csi4j.driver.engine.RangeCursor.Method.DATA_COMPARISON));
    }

    private static void allocated(ManagedChannel channel, Path pool, int runs) throws IOException {
        String volume = volume(channel, "sparse-100g", 100 * GIB);
        Path image = pool.resolve("volumes").resolve(volume + ".img");
        long written = rewrite(image, 100 * GIB, 64 * 1024, 16384, 3);
        String snapshot = snapshot(channel, "sparse-a", volume);
        System.out.printf(Locale.ROOT, "setup: wrote %d random 64 KiB blocks (%d MiB) into a 100 GiB sparse volume%n", 16384, written / MIB);
        var stub = SnapshotMetadataGrpc.newBlockingStub(channel);
        report("GetMetadataAllocated, 100 GiB sparse volume, 1 GiB written", runs, () -> {
            long[] totals = new long[2];
            stub.withDeadlineAfter(10, TimeUnit.MINUTES).getMetadataAllocated(GetMetadataAllocatedRequest.newBuilder()
                    .setSnapshotId(snapshot).build()).forEachRemaining(m -> {
                        totals[0] += m.getBlockMetadataCount();
                        m.getBlockMetadataList().forEach(b -> totals[1] += b.getSizeBytes());
                    });
            return totals;
        });
    }

    /** Writes {@code count} distinct random blocks of {@code block} bytes; returns the bytes written. */
    private static long rewrite(Path image, long size, int block, int count, long seed) throws IOException {
        Random random = new Random(seed);
        long slots = size / block;
        BitSet used = new BitSet();
        byte[] data = new byte[block];
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.WRITE)) {
            for (int i = 0; i < count; ) {
                long slot = (long) (random.nextDouble() * slots);
                if (slot > Integer.MAX_VALUE || used.get((int) slot)) continue;
                used.set((int) slot);
                random.nextBytes(data);
                ByteBuffer buffer = ByteBuffer.wrap(data);
                while (buffer.hasRemaining()) ch.write(buffer, slot * block + buffer.position());
                i++;
            }
            ch.force(true);
        }
        return (long) count * block;
    }

    private interface Call {
        long[] run();
    }

    private static void report(String name, int runs, Call call) {
        List<Double> seconds = new ArrayList<>();
        long[] totals = null;
        for (int i = 0; i < runs; i++) {
            long t0 = System.nanoTime();
            totals = call.run();
            seconds.add((System.nanoTime() - t0) / 1e9);
        }
        double[] sorted = seconds.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        System.out.printf(Locale.ROOT, "%s: %d ranges, %d MiB; runs %s s; median %.3f s, max %.3f s%n", name, totals[0],
                totals[1] / MIB, Arrays.toString(seconds.stream().map(s -> String.format(Locale.ROOT, "%.3f", s)).toArray()),
                sorted[sorted.length / 2], sorted[sorted.length - 1]);
    }

    private static String volume(ManagedChannel channel, String name, long size) {
        return ControllerGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.MINUTES).createVolume(CreateVolumeRequest.newBuilder()
                .setName(name).setCapacityRange(Wire.range(size, 0)).addVolumeCapabilities(Wire.block()).build())
                .getVolume().getVolumeId();
    }

    private static String snapshot(ManagedChannel channel, String name, String volume) {
        return ControllerGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.MINUTES).createSnapshot(CreateSnapshotRequest.newBuilder()
                .setName(name).setSourceVolumeId(volume).build()).getSnapshot().getSnapshotId();
    }
}
