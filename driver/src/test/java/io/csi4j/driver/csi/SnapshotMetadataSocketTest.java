package io.csi4j.driver.csi;

import static io.csi4j.driver.csi.Wire.MIB;
import static io.csi4j.driver.csi.Wire.block;
import static io.csi4j.driver.csi.Wire.fails;
import static io.csi4j.driver.csi.Wire.publish;
import static io.csi4j.driver.csi.Wire.stage;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.GetMetadataAllocatedRequest;
import io.csi4j.proto.csi.GetMetadataAllocatedResponse;
import io.csi4j.proto.csi.GetMetadataDeltaRequest;
import io.csi4j.proto.csi.GetPluginCapabilitiesRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.proto.csi.PluginCapability;
import io.csi4j.proto.csi.SnapshotMetadataGrpc;
import io.grpc.Context;
import io.grpc.Status;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * CSI SnapshotMetadata over the plugin's real socket, against block volumes written through their loop
 * devices: on an XFS reflink pool (deltas from shared extents) and on an ext4 pool (snapshots are copies:
 * deltas by comparing data). What a backup tool relies on is checked literally: the delta's ranges, read from
 * the target and laid over a copy of the base, rebuild the target byte for byte.
 */
@ExtendWith(LeakCheck.class)
class SnapshotMetadataSocketTest {
    private static ServedDriver reflinkPool;
    private static ScratchFilesystem ext4;
    private static ServedDriver copyPool;
    private Path nodeDir;
    private final List<Runnable> undo = new ArrayList<>();

    @BeforeAll
    static void startPlugins() {
        ScratchFilesystem.require("xfs");
        ScratchFilesystem.require("ext4");
        reflinkPool = ServedDriver.imagePool(2L << 30);
        ext4 = ScratchFilesystem.create("ext4", 1L << 30);
        copyPool = ServedDriver.plainPool(ext4.mountPoint().resolve("data"), EngineKind.IMAGE);
    }

    @AfterAll
    static void stopPlugins() {
        try {
            if (copyPool != null) copyPool.close();
        } finally {
            try {
                if (ext4 != null) ext4.close();
            } finally {
                if (reflinkPool != null) reflinkPool.close();
            }
        }
    }

    private ServedDriver served(String pool) {
        return pool.equals("reflink") ? reflinkPool : copyPool;
    }

    private Path nodeDir(ServedDriver served, TestInfo test) {
        nodeDir = served.nodeDir(test.getDisplayName().replaceAll("[^A-Za-z0-9]", "_"));
        return nodeDir;
    }

    @AfterEach
    void cleanUp() {
        for (Runnable r : undo.reversed()) r.run();
        undo.clear();
        for (ServedDriver s : List.of(reflinkPool, copyPool)) {
            if (nodeDir != null && nodeDir.startsWith(s.root)) assertEquals(List.of(), s.cleanUp(nodeDir), "mounts or loop devices left");
        }
    }

    private static SnapshotMetadataGrpc.SnapshotMetadataBlockingStub metadata(ServedDriver served) {
        return SnapshotMetadataGrpc.newBlockingStub(served.channel()).withDeadlineAfter(2, TimeUnit.MINUTES);
    }

    // the served driver's stubs carry one deadline from their start; these calls get their own
    private static io.csi4j.proto.csi.ControllerGrpc.ControllerBlockingStub controller(ServedDriver served) {
        return io.csi4j.proto.csi.ControllerGrpc.newBlockingStub(served.channel()).withDeadlineAfter(2, TimeUnit.MINUTES);
    }

    private static io.csi4j.proto.csi.NodeGrpc.NodeBlockingStub node(ServedDriver served) {
        return io.csi4j.proto.csi.NodeGrpc.newBlockingStub(served.channel()).withDeadlineAfter(2, TimeUnit.MINUTES);
    }

    /** A block volume, staged and published: returns its device (the publish target). */
    private Path blockVolume(ServedDriver served, String name, long size, TestInfo test) {
        Path dir = nodeDir(served, test);
        String id = controller(served).createVolume(CreateVolumeRequest.newBuilder().setName(name)
                .setCapacityRange(Wire.range(size, 0)).addVolumeCapabilities(block()).build()).getVolume().getVolumeId();
        Path staging = dir.resolve("staging-" + name);
        Path target = dir.resolve("target-" + name);
        node(served).nodeStageVolume(stage(id, staging, block()));
        node(served).nodePublishVolume(publish(id, staging, target, block()));
        undo.add(() -> {
            node(served).nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target.toString()).build());
            node(served).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
        });
        volumeIds.put(target, id);
        return target;
    }

    private final java.util.Map<Path, String> volumeIds = new java.util.HashMap<>();

    private String snapshot(ServedDriver served, Path device, String name) {
        return controller(served).createSnapshot(CreateSnapshotRequest.newBuilder().setName(name)
                .setSourceVolumeId(volumeIds.get(device)).build()).getSnapshot().getSnapshotId();
    }

    private static Path snapshotImage(ServedDriver served, String snapshotId) {
        return served.driver().engine().pool().path().resolve("snapshots").resolve(snapshotId + ".img");
    }

    /** Random bytes with no zero byte: written data always differs from a hole and is "non-zero" everywhere. */
    private static byte[] pattern(Random random, int length) {
        byte[] data = new byte[length];
        random.nextBytes(data);
        for (int i = 0; i < data.length; i++) if (data[i] == 0) data[i] = 1;
        return data;
    }

    // ---- capability ----

    @Test
    void theImageEngineAdvertisesTheService() {
        var caps = reflinkPool.identity.getPluginCapabilities(GetPluginCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList();
        assertTrue(caps.stream().anyMatch(c -> c.getService().getType() == PluginCapability.Service.Type.SNAPSHOT_METADATA_SERVICE), caps.toString());
    }

    // ---- known patterns ----

    @ParameterizedTest
    @ValueSource(strings = {"reflink", "copy"})
    void deltaIsWhatWasWrittenAndAllocatedCoversEveryByte(String pool, TestInfo test) throws IOException {
        ServedDriver served = served(pool);
        Path device = blockVolume(served, "known", 64 * MIB, test);
        Random random = new Random(17);
        long[][] first = {{0, 4096}, {(5 * MIB) + 4093, 8192}, {20 * MIB, 3 * MIB}, {(64 * MIB) - 4096, 4096}};
        for (long[] w : first) Ranges.write(device, w[0], pattern(random, (int) w[1]));
        String base = snapshot(served, device, "known-a");
        long[][] second = {{100, 50}, {(5 * MIB) + 8000, 10000}, {21 * MIB, MIB}, {40 * MIB + 1, 1}, {(64 * MIB) - 4096, 4096}};
        for (long[] w : second) Ranges.write(device, w[0], pattern(random, (int) w[1]));
        String target = snapshot(served, device, "known-b");

        var stub = metadata(served);
        List<long[]> expected = Ranges.normalize(Stream.of(second).map(w -> Ranges.blocks(w[0], w[1])).toList());
        Ranges delta = Ranges.delta(stub, base, target, 0, 0);
        assertEquals(64 * MIB, delta.capacity());
        assertEquals(Ranges.show(expected), Ranges.show(Ranges.normalize(delta.list())), "delta = written ranges, in whole blocks");

        for (String snapshot : List.of(base, target)) {
            Ranges allocated = Ranges.allocated(stub, snapshot, 0, 0);
            assertEquals(64 * MIB, allocated.capacity());
            assertCoversEveryNonZeroByte(snapshotImage(served, snapshot), allocated.list());
        }
        assertRebuildsTarget(served, base, target, delta.list());
        RangeCursor.Method method = pool.equals("reflink") ? RangeCursor.Method.SHARED_EXTENTS : RangeCursor.Method.DATA_COMPARISON;
        assertTrue(served.driver().snapshotBlocks().calls(method) > 0, "the delta was found by " + method);
        assertTrue(served.driver().snapshotBlocks().prometheusText()
                .contains("csi4j_snapshot_metadata_calls_total{method=\"" + method.name().toLowerCase() + "\"}"), "and the metrics say so");
    }

    // ---- randomized ----

    @ParameterizedTest
    @ValueSource(strings = {"reflink", "copy"})
    void randomWritesDeltasAndRebuilds(String pool, TestInfo test) throws IOException {
        ServedDriver served = served(pool);
        long size = 48 * MIB;
        Path device = blockVolume(served, "random", size, test);
        long seed = Long.getLong("csi4j.seed", System.nanoTime());
        Random random = new Random(seed);
        String previous = snapshot(served, device, "random-0");
        for (int round = 1; round <= 3; round++) {   // each call its own deadline: a stub's is absolute
            List<long[]> written = new ArrayList<>();
            int writes = 1 + random.nextInt(30);
            try (var ch = java.nio.channels.FileChannel.open(device, java.nio.file.StandardOpenOption.WRITE)) {
                for (int i = 0; i < writes; i++) {
                    int length = 1 + random.nextInt(random.nextBoolean() ? 8192 : 512 * 1024);
                    long offset = (long) (random.nextDouble() * (size - length));
                    var buffer = java.nio.ByteBuffer.wrap(pattern(random, length));
                    while (buffer.hasRemaining()) ch.write(buffer, offset + buffer.position());
                    written.add(Ranges.blocks(offset, length));
                }
                ch.force(true);   // one flush a round: the snapshot must see every write
            }
            String current = snapshot(served, device, "random-" + round);
            int max = random.nextInt(4);   // 0 (our default) or tiny pages
            Ranges delta = Ranges.delta(metadata(served), previous, current, 0, max);
            assertEquals(Ranges.show(Ranges.normalize(written)), Ranges.show(Ranges.normalize(delta.list())),
                    "seed " + seed + " round " + round);
            assertCoversEveryNonZeroByte(snapshotImage(served, current), Ranges.allocated(metadata(served), current, 0, max).list());
            assertRebuildsTarget(served, previous, current, delta.list());
            // a resume from anywhere gives the rest of the same answer
            long from = (long) (random.nextDouble() * size);
            assertEquals(Ranges.show(clip(Ranges.normalize(delta.list()), from)),
                    Ranges.show(Ranges.normalize(Ranges.delta(metadata(served), previous, current, from, 0).list())), "seed " + seed + " resume at " + from);
            previous = current;
        }
    }

    private static List<long[]> clip(List<long[]> ranges, long from) {
        return ranges.stream().filter(r -> r[1] > from).map(r -> new long[] {Math.max(r[0], from), r[1]}).toList();
    }

    // ---- streaming rules and errors ----

    @Test
    void maxResultsResumeAndErrors(TestInfo test) {
        ServedDriver served = reflinkPool;
        Path device = blockVolume(served, "rules", 32 * MIB, test);
        Random random = new Random(5);
        for (int i = 0; i < 40; i++) Ranges.write(device, i * 512 * 1024L, pattern(random, 4096));
        String a = snapshot(served, device, "rules-a");
        for (int i = 0; i < 40; i += 2) Ranges.write(device, i * 512 * 1024L + 8192, pattern(random, 4096));
        String b = snapshot(served, device, "rules-b");
        var stub = metadata(served);

        Ranges all = Ranges.allocated(stub, a, 0, 0);
        assertEquals(40, all.list().size(), Ranges.show(all.list()));
        assertEquals(Ranges.show(all.list()), Ranges.show(Ranges.allocated(stub, a, 0, 1).list()), "one range a message, same answer");
        assertEquals(Ranges.show(all.list()), Ranges.show(Ranges.allocated(stub, a, 0, Integer.MAX_VALUE).list()));
        // resume inside a range: that range is clipped to the offset, nothing before it comes again
        long inside = all.list().get(7)[0] + 100;
        assertEquals(Ranges.show(clip(all.list(), inside)), Ranges.show(Ranges.allocated(stub, a, inside, 3).list()));
        // the capacity itself is where a finished stream would resume: nothing left, but an answer
        assertEquals(List.of(), Ranges.allocated(stub, a, 32 * MIB, 0).list());
        assertEquals(20, Ranges.delta(stub, a, b, 0, 2).list().size());

        fails(Status.Code.NOT_FOUND, () -> drain(stub.getMetadataAllocated(allocated("snap-node-a-nosuch", 0, 0))));
        fails(Status.Code.NOT_FOUND, () -> drain(stub.getMetadataDelta(delta(a, "snap-node-a-nosuch", 0, 0))));
        fails(Status.Code.NOT_FOUND, () -> drain(stub.getMetadataDelta(delta("snap-node-a-nosuch", b, 0, 0))));
        fails(Status.Code.INVALID_ARGUMENT, () -> drain(stub.getMetadataAllocated(allocated("", 0, 0))));
        fails(Status.Code.INVALID_ARGUMENT, () -> drain(stub.getMetadataDelta(delta(a, "", 0, 0))));
        fails(Status.Code.OUT_OF_RANGE, () -> drain(stub.getMetadataAllocated(allocated(a, 32 * MIB + 1, 0))));
        fails(Status.Code.OUT_OF_RANGE, () -> drain(stub.getMetadataAllocated(allocated(a, -1, 0))));
        fails(Status.Code.OUT_OF_RANGE, () -> drain(stub.getMetadataDelta(delta(a, b, 32 * MIB + 1, 0))));
        fails(Status.Code.INVALID_ARGUMENT, () -> drain(stub.getMetadataAllocated(allocated(a, 0, -1))));
        fails(Status.Code.INVALID_ARGUMENT, () -> drain(stub.getMetadataDelta(delta(a, b, 0, -5))));

        // snapshots of two volumes
        Path other = blockVolume(served, "rules-other", 16 * MIB, test);
        Ranges.write(other, 0, pattern(random, 4096));
        String c = snapshot(served, other, "rules-c");
        Status mixed = fails(Status.Code.INVALID_ARGUMENT, () -> drain(stub.getMetadataDelta(delta(a, c, 0, 0))));
        assertTrue(mixed.getDescription().contains("different volumes"), mixed.getDescription());
    }

    @Test
    void aCancelledStreamReleasesItsFiles(TestInfo test) throws Exception {
        ServedDriver served = reflinkPool;
        Path device = blockVolume(served, "cancel", 32 * MIB, test);
        Random random = new Random(9);
        for (int i = 0; i < 60; i++) Ranges.write(device, i * 512 * 1024L, pattern(random, 4096));
        String a = snapshot(served, device, "cancel-a");
        Path snapshots = snapshotImage(served, a).getParent();
        long before = openFilesUnder(snapshots);
        try (Context.CancellableContext context = Context.current().withCancellation()) {
            Iterator<GetMetadataAllocatedResponse> it = context.call(() ->
                    metadata(served).getMetadataAllocated(allocated(a, 0, 1)));
            assertTrue(it.hasNext());
            it.next();
            context.cancel(null);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (openFilesUnder(snapshots) > before && System.nanoTime() < deadline) Thread.sleep(20);
        assertEquals(before, openFilesUnder(snapshots), "the cancelled stream closed its snapshot image");
        assertEquals(60, Ranges.allocated(metadata(served), a, 0, 0).list().size(), "the plugin still answers");
    }

    // ---- helpers ----

    private static GetMetadataAllocatedRequest allocated(String id, long from, int max) {
        return GetMetadataAllocatedRequest.newBuilder().setSnapshotId(id).setStartingOffset(from).setMaxResults(max).build();
    }

    private static GetMetadataDeltaRequest delta(String base, String target, long from, int max) {
        return GetMetadataDeltaRequest.newBuilder().setBaseSnapshotId(base).setTargetSnapshotId(target)
                .setStartingOffset(from).setMaxResults(max).build();
    }

    private static void drain(Iterator<?> it) {
        it.forEachRemaining(m -> {});
    }

    private static long openFilesUnder(Path dir) throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.filter(fd -> {
                try {
                    return Files.readSymbolicLink(fd).startsWith(dir);
                } catch (IOException e) {
                    return false;
                }
            }).count();
        }
    }

    /** Every non-zero byte of the image lies in one of the ranges. */
    private static void assertCoversEveryNonZeroByte(Path image, List<long[]> ranges) throws IOException {
        List<long[]> sorted = Ranges.normalize(ranges);
        byte[] buffer = new byte[1 << 20];
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "r")) {
            long size = f.length();
            int next = 0;
            for (long at = 0; at < size; at += buffer.length) {
                int n = (int) Math.min(buffer.length, size - at);
                f.readFully(buffer, 0, n);
                for (int i = 0; i < n; i++) {
                    if (buffer[i] == 0) continue;
                    long offset = at + i;
                    while (next < sorted.size() && sorted.get(next)[1] <= offset) next++;
                    assertTrue(next < sorted.size() && sorted.get(next)[0] <= offset,
                            "non-zero byte at " + offset + " outside every allocated range " + Ranges.show(sorted));
                }
            }
        }
    }

    /** The backup tool's use: copy the base, lay the delta's ranges read from the target over it, compare. */
    private void assertRebuildsTarget(ServedDriver served, String base, String target, List<long[]> delta) throws IOException {
        Path copy = nodeDir.resolve("rebuilt-" + target + ".img");
        Files.copy(snapshotImage(served, base), copy);
        try (RandomAccessFile from = new RandomAccessFile(snapshotImage(served, target).toFile(), "r");
             RandomAccessFile to = new RandomAccessFile(copy.toFile(), "rw")) {
            for (long[] r : delta) {
                byte[] data = new byte[(int) (r[1] - r[0])];
                from.seek(r[0]);
                from.readFully(data);
                to.seek(r[0]);
                to.write(data);
            }
            to.setLength(from.length());
        }
        assertFalse(Files.mismatch(copy, snapshotImage(served, target)) >= 0, "base + delta = target, byte for byte");
        Files.delete(copy);
    }
}
