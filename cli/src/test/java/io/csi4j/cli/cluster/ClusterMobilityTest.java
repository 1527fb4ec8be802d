package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteSnapshotRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.ListVolumesRequest;
import io.csi4j.proto.csi.TopologyRequirement;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.proto.csi.VolumeContentSource;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Restore and clone onto another node (image engine, real pools): the target agent pulls the source's data from the
 * source's agent over mutual TLS. Byte for byte, sparse, incremental against the replica of an older snapshot, every
 * rule of CreateVolume, and a target whose pool fills up mid-copy (RESOURCE_EXHAUSTED, nothing left behind).
 */
class ClusterMobilityTest {
    static final List<String> NODES = List.of("node-a", "node-b");
    static final long MIB = 1L << 20;

    @TempDir
    static Path tmp;
    static LocalCluster cluster;
    static ControllerGrpc.ControllerBlockingStub controller;

    @BeforeAll
    static void start() throws Exception {
        Privileged.requireRoot();
        // node-a: a 2 GiB pool; node-b: 1 GiB that may promise 4x its size, so a big copy meets a full disk, not a refusal
        cluster = LocalCluster.start(tmp, NODES, EngineKind.IMAGE, OptionalLong.of(2L << 30), 4.0);
        controller = ControllerGrpc.newBlockingStub(cluster.controllerChannel());
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    static VolumeCapability block() {
        return VolumeCapability.newBuilder().setBlock(VolumeCapability.BlockVolume.getDefaultInstance())
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
    }

    static CreateVolumeRequest.Builder request(String name, String node, long bytes, VolumeContentSource source) {
        var r = CreateVolumeRequest.newBuilder().setName(name).addVolumeCapabilities(block())
                .setAccessibilityRequirements(TopologyRequirement.newBuilder().addRequisite(ClusterRoutingTest.on(node)));
        if (bytes > 0) r.setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(bytes));
        if (source != null) r.setVolumeContentSource(source);
        return r;
    }

    static VolumeContentSource fromSnapshot(String id) {
        return VolumeContentSource.newBuilder().setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(id)).build();
    }

    static VolumeContentSource fromVolume(String id) {
        return VolumeContentSource.newBuilder().setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(id)).build();
    }

    static Path image(String volumeId) {
        String node = volumeId.endsWith("-node-a") ? "node-a" : "node-b";
        return cluster.nodes.get(node).dataDir().resolve("pool").resolve("volumes").resolve(volumeId + ".img");
    }

    /** Writes {@code count} blocks of {@code size} bytes of seeded random data at spread-out offsets. */
    static long scribble(String volumeId, long seed, int count, int size) throws IOException {
        var random = new Random(seed);
        long written = 0;
        try (var ch = FileChannel.open(image(volumeId), StandardOpenOption.WRITE)) {
            long blocks = ch.size() / size;
            byte[] data = new byte[size];
            for (int i = 0; i < count; i++) {
                random.nextBytes(data);
                ch.write(ByteBuffer.wrap(data), (Math.floorMod(random.nextLong(), blocks)) * size);
                written += size;
            }
            ch.force(true);
        }
        return written;
    }

    /** Writes {@code bytes} of non-zero data from offset 0. */
    static void fill(String volumeId, long bytes) throws IOException {
        byte[] data = new byte[(int) MIB];
        new Random(5).nextBytes(data);
        try (var ch = FileChannel.open(image(volumeId), StandardOpenOption.WRITE)) {
            for (long at = 0; at < bytes; at += MIB) ch.write(ByteBuffer.wrap(data), at);
            ch.force(true);
        }
    }

    static byte[] digest(Path file) throws Exception {
        var md = MessageDigest.getInstance("SHA-256");
        try (var ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer buffer = ByteBuffer.allocate(1 << 20);
            while (ch.read(buffer) > 0) {
                md.update(buffer.flip());
                buffer.clear();
            }
        }
        return md.digest();
    }

    static long allocated(Path file) {
        return io.csi4j.driver.os.FileStat.of(file).allocatedBytes();
    }

    static long received() {
        return cluster.nodes.get("node-b").driver().copies().bytesReceived();
    }

    static String snapshot(String name, String volumeId) {
        return controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName(name).setSourceVolumeId(volumeId).build())
                .getSnapshot().getSnapshotId();
    }

    static void deleteVolume(String id) {
        controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
    }

    static List<String> leftovers(String node) throws IOException {
        try (Stream<Path> files = Files.list(cluster.nodes.get(node).dataDir().resolve("pool").resolve(".tmp"))) {
            return files.map(Path::toString).toList();
        }
    }

    @Test
    void restoreOntoAnotherNodeIsByteForByteSparseAndThenIncremental() throws Exception {
        String source = controller.createVolume(request("mob-src", "node-a", 256 * MIB, null).build()).getVolume().getVolumeId();
        long written = scribble(source, 1, 24, (int) MIB);
        String s1 = snapshot("mob-s1", source);

        long before = received();
        Volume copy1 = controller.createVolume(request("mob-copy1", "node-b", 256 * MIB, fromSnapshot(s1)).build()).getVolume();
        assertTrue(copy1.getVolumeId().endsWith("-node-b"), copy1.toString());
        assertEquals("node-b", copy1.getAccessibleTopology(0).getSegmentsMap().values().iterator().next());
        assertEquals(s1, copy1.getContentSource().getSnapshot().getSnapshotId());
        assertEquals(256 * MIB, copy1.getCapacityBytes());
        long full = received() - before;
        assertArrayEquals(digest(image(source)), digest(image(copy1.getVolumeId())), "the copy holds the snapshot's bytes");
        assertTrue(full >= written - 2 * MIB && full <= written + written / 20, "only allocated data travels: " + full + " of " + written);
        assertTrue(allocated(image(copy1.getVolumeId())) <= allocated(image(source)) + 4 * MIB, "sparse stays sparse");

        // the same name again: the same volume, nothing copied; a different size: ALREADY_EXISTS
        before = received();
        assertEquals(copy1.getVolumeId(), controller.createVolume(request("mob-copy1", "node-b", 256 * MIB, fromSnapshot(s1)).build())
                .getVolume().getVolumeId());
        assertEquals(before, received());
        var exists = assertThrows(StatusRuntimeException.class, () ->
                controller.createVolume(request("mob-copy1", "node-b", 512 * MIB, fromSnapshot(s1)).setCapacityRange(
                        CapacityRange.newBuilder().setRequiredBytes(512 * MIB).setLimitBytes(512 * MIB)).build()));
        assertEquals(Status.Code.ALREADY_EXISTS, exists.getStatus().getCode(), exists.getStatus().toString());

        // a newer snapshot of the same volume: node-b holds a replica of s1, so only what changed travels
        long changed = scribble(source, 2, 3, (int) MIB);
        String s2 = snapshot("mob-s2", source);
        before = received();
        Volume copy2 = controller.createVolume(request("mob-copy2", "node-b", 256 * MIB, fromSnapshot(s2)).build()).getVolume();
        long incremental = received() - before;
        assertArrayEquals(digest(image(source)), digest(image(copy2.getVolumeId())), "the incremental copy holds s2's bytes");
        assertTrue(incremental > 0 && incremental <= changed + 2 * MIB, "only changed ranges travel: " + incremental + " for " + changed);

        // the same snapshot once more: node-b's replica of it is the whole content, nothing travels
        before = received();
        Volume copy3 = controller.createVolume(request("mob-copy3", "node-b", 256 * MIB, fromSnapshot(s2)).build()).getVolume();
        assertEquals(before, received(), "a restore of a snapshot node-b holds a replica of sends nothing");
        assertArrayEquals(digest(image(source)), digest(image(copy3.getVolumeId())));
        deleteVolume(copy3.getVolumeId());

        // a capacity below the source's size: OUT_OF_RANGE, and node-b keeps nothing of it
        var small = assertThrows(StatusRuntimeException.class, () -> controller.createVolume(request("mob-small", "node-b", 64 * MIB,
                fromSnapshot(s2)).setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(64 * MIB).setLimitBytes(64 * MIB)).build()));
        assertEquals(Status.Code.OUT_OF_RANGE, small.getStatus().getCode(), small.getStatus().toString());
        assertTrue(leftovers("node-b").isEmpty(), leftovers("node-b").toString());

        for (String s : List.of(s1, s2)) controller.deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(s).build());
        for (String v : List.of(copy1.getVolumeId(), copy2.getVolumeId(), source)) deleteVolume(v);
    }

    @Test
    void cloneOntoAnotherNodeIsByteForByte() throws Exception {
        String source = controller.createVolume(request("mob-clone-src", "node-a", 128 * MIB, null).build()).getVolume().getVolumeId();
        scribble(source, 3, 16, 256 * 1024);
        byte[] expected = digest(image(source));
        Volume clone = controller.createVolume(request("mob-clone", "node-b", 128 * MIB, fromVolume(source)).build()).getVolume();
        assertTrue(clone.getVolumeId().endsWith("-node-b"), clone.toString());
        assertEquals(source, clone.getContentSource().getVolume().getVolumeId());
        assertArrayEquals(expected, digest(image(clone.getVolumeId())));
        assertTrue(leftovers("node-a").isEmpty(), "the source's cut is gone: " + leftovers("node-a"));
        deleteVolume(clone.getVolumeId());
        deleteVolume(source);
    }

    @Test
    void aTargetThatFillsUpAnswersResourceExhaustedAndKeepsNothing() throws Exception {
        String source = controller.createVolume(request("mob-big-src", "node-a", 1536 * MIB, null).build()).getVolume().getVolumeId();
        fill(source, 1100 * MIB);   // more data than node-b's 1 GiB pool holds
        String snap = snapshot("mob-big", source);
        int volumesBefore = controller.listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesCount();
        var full = assertThrows(StatusRuntimeException.class, () ->
                controller.createVolume(request("mob-big-copy", "node-b", 1536 * MIB, fromSnapshot(snap)).build()));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, full.getStatus().getCode(), full.getStatus().toString());
        assertEquals(volumesBefore, controller.listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesCount(), "no row");
        assertTrue(leftovers("node-b").isEmpty(), leftovers("node-b").toString());
        try (Stream<Path> images = Files.list(cluster.nodes.get("node-b").dataDir().resolve("pool").resolve("volumes"))) {
            assertTrue(images.noneMatch(p -> p.getFileName().toString().contains("mob-big")), "no image");
        }
        controller.deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(snap).build());
        deleteVolume(source);
    }

    @Test
    void aPeerWithACertificateOfAnotherCaIsRefused() throws Exception {
        String source = controller.createVolume(request("mob-guarded", "node-a", 64 * MIB, null).build()).getVolume().getVolumeId();
        scribble(source, 6, 4, (int) MIB);
        String snap = snapshot("mob-guarded", source);
        var intruder = TestCertificates.authority(tmp.resolve("other-pki"), "other").issue("intruder");
        var stub = io.csi4j.proto.cluster.NodeAgentGrpc.newBlockingStub(cluster.agentChannel("node-a", intruder));
        var refused = assertThrows(StatusRuntimeException.class, () -> stub.withDeadlineAfter(20, java.util.concurrent.TimeUnit.SECONDS)
                .readSource(io.csi4j.proto.cluster.ReadSourceRequest.newBuilder().setSnapshotId(snap).build()).forEachRemaining(c -> {}));
        assertEquals(Status.Code.UNAVAILABLE, refused.getStatus().getCode(), "refused at the handshake: " + refused.getStatus());
        // a peer of the cluster's CA is served (what node-b does)
        var peer = io.csi4j.proto.cluster.NodeAgentGrpc.newBlockingStub(cluster.agentChannel("node-a", cluster.ca.issue("peer")));
        var chunks = new java.util.ArrayList<io.csi4j.proto.cluster.SourceChunk>();
        peer.readSource(io.csi4j.proto.cluster.ReadSourceRequest.newBuilder().setSnapshotId(snap).build()).forEachRemaining(chunks::add);
        assertEquals(64 * MIB, chunks.getFirst().getHeader().getSizeBytes());
        assertTrue(chunks.getLast().hasTrailer(), chunks.getLast().toString());
        controller.deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(snap).build());
        deleteVolume(source);
    }

    /**
     * A delta of many small ranges (what a replication round of random 64 KiB writes sends): node-b, which asks for
     * several ranges per message, builds the same bytes as the source; a reader from before batches (no
     * range_batch_bytes) still gets one range per message from the same agent, and both streams, applied over the old
     * snapshot's bytes, build the new one byte for byte; no message of several carries more than its budget.
     */
    @Test
    void manySmallRangesTravelSeveralToAMessageAndAnOlderReaderStillGetsOneEach() throws Exception {
        String source = controller.createVolume(request("mob-batch", "node-a", 64 * MIB, null).build()).getVolume().getVolumeId();
        scribble(source, 7, 200, 64 << 10);
        String s1 = snapshot("mob-batch-s1", source);
        Volume copy1 = controller.createVolume(request("mob-batch-c1", "node-b", 64 * MIB, fromSnapshot(s1)).build()).getVolume();
        assertArrayEquals(digest(image(source)), digest(image(copy1.getVolumeId())), "the full copy, batched");
        byte[] old = Files.readAllBytes(image(copy1.getVolumeId()));

        scribble(source, 8, 300, 64 << 10);
        String s2 = snapshot("mob-batch-s2", source);
        Volume copy2 = controller.createVolume(request("mob-batch-c2", "node-b", 64 * MIB, fromSnapshot(s2)).build()).getVolume();
        byte[] fresh = Files.readAllBytes(image(source));
        assertArrayEquals(fresh, Files.readAllBytes(image(copy2.getVolumeId())), "the incremental copy, batched");

        var peer = io.csi4j.proto.cluster.NodeAgentGrpc.newBlockingStub(cluster.agentChannel("node-a", cluster.ca.issue("peer")));
        var ask = io.csi4j.proto.cluster.ReadSourceRequest.newBuilder().setSnapshotId(s2).addBaseSnapshotIds(s1).setReaderNodeId("node-x");
        var older = new java.util.ArrayList<io.csi4j.proto.cluster.SourceChunk>();
        peer.withDeadlineAfter(60, java.util.concurrent.TimeUnit.SECONDS).readSource(ask.build()).forEachRemaining(older::add);
        var batched = new java.util.ArrayList<io.csi4j.proto.cluster.SourceChunk>();
        peer.withDeadlineAfter(60, java.util.concurrent.TimeUnit.SECONDS).readSource(ask.setRangeBatchBytes(MIB).build())
                .forEachRemaining(batched::add);
        assertTrue(older.stream().noneMatch(io.csi4j.proto.cluster.SourceChunk::hasRanges), "an older reader gets one range per message");
        long rangesOlder = older.stream().filter(io.csi4j.proto.cluster.SourceChunk::hasRange).count();
        assertTrue(rangesOlder >= 100, rangesOlder + " ranges: a delta of many small ones");
        assertTrue(batched.size() * 4 < older.size(), batched.size() + " messages batched, " + older.size() + " one range each");
        for (var chunk : batched) {
            if (!chunk.hasRanges()) continue;
            long data = chunk.getRanges().getRangesList().stream().mapToLong(r -> r.getData().size()).sum();
            assertTrue(data <= MIB, "a message of " + data + " data bytes");
        }
        assertEquals(older.getLast().getTrailer(), batched.getLast().getTrailer(), "the same ranges counted");
        assertArrayEquals(fresh, applied(old, older), "one range per message");
        assertArrayEquals(fresh, applied(old, batched), "several ranges per message");
        for (String v : List.of(copy2.getVolumeId(), copy1.getVolumeId())) deleteVolume(v);
        for (String s : List.of(s2, s1)) controller.deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(s).build());
        deleteVolume(source);
    }

    /** {@code base} with a ReadSource stream's ranges applied as a reader does: each CRC32C checked, zeros punched. */
    static byte[] applied(byte[] base, List<io.csi4j.proto.cluster.SourceChunk> stream) {
        byte[] built = base.clone();
        for (var chunk : stream) {
            var ranges = chunk.hasRanges() ? chunk.getRanges().getRangesList() : chunk.hasRange() ? List.of(chunk.getRange()) : List.<io.csi4j.proto.cluster.DataRange>of();
            for (var r : ranges) {
                int at = Math.toIntExact(r.getOffset()), length = Math.toIntExact(r.getLength());
                byte[] data = r.getZero() ? new byte[length] : r.getData().toByteArray();
                var crc = new java.util.zip.CRC32C();
                crc.update(data);
                assertEquals(r.getCrc32C(), (int) crc.getValue(), "the CRC32C at " + at);
                assertEquals(length, data.length);
                System.arraycopy(data, 0, built, at, length);
            }
        }
        return built;
    }
}
