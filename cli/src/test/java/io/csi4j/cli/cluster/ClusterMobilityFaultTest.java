package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterMobilityTest.MIB;
import static io.csi4j.cli.cluster.ClusterMobilityTest.fromSnapshot;
import static io.csi4j.cli.cluster.ClusterMobilityTest.fromVolume;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.cluster.AgentStatus;
import io.csi4j.proto.cluster.ClusterStatusGrpc;
import io.csi4j.proto.cluster.GetClusterStatusRequest;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.ListVolumesRequest;
import io.csi4j.proto.csi.ListVolumesResponse;
import io.csi4j.proto.csi.Volume;
import io.grpc.StatusRuntimeException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Copies between nodes under faults, with real processes: two image-engine agents whose copies are held to 16 MiB/s
 * (so a copy of 64 MiB takes seconds and can be hit in the middle) and a controller. A retry of the name while a copy
 * runs joins it; the source agent, the target agent or the controller SIGKILLed mid-copy: after restarts the CO's
 * retry completes the volume with the right bytes, and neither node keeps a half-made image, a temporary file or a row.
 */
class ClusterMobilityFaultTest {
    static final int DATA_MIB = 64;

    @TempDir
    static Path tmp;
    static ProcessCluster cluster;
    static String snapshot;
    static String sourceVolume;
    static byte[] expected;
    static int metricsPort;

    @BeforeAll
    static void start() throws Exception {
        Privileged.requireRoot();
        var flags = List.of("--engine", "image", "--pool-size", "1G", "--overcommit-ratio", "4", "--copy-bandwidth", "16M");
        metricsPort = ProcessCluster.freePort();
        cluster = new ProcessCluster(tmp);
        cluster.addAgent("node-a", "node-a", flags).start();
        var withMetrics = new java.util.ArrayList<>(flags);
        withMetrics.addAll(List.of("--metrics-address", "127.0.0.1:" + metricsPort));
        cluster.addAgent("node-b", "node-b", withMetrics).start();
        cluster.startController(List.of());
        cluster.awaitEveryNode();
        var csi = controller();
        sourceVolume = csi.createVolume(ClusterMobilityTest.request("fault-src", "node-a", 128 * MIB, null).build()).getVolume().getVolumeId();
        byte[] data = new byte[(int) MIB];
        var random = new Random(7);
        try (var ch = FileChannel.open(image("node-a", sourceVolume), StandardOpenOption.WRITE)) {
            for (int i = 0; i < DATA_MIB; i++) {
                random.nextBytes(data);
                ch.write(ByteBuffer.wrap(data), i * 2 * MIB);   // every other MiB: sparse
            }
            ch.force(true);
        }
        expected = ClusterMobilityTest.digest(image("node-a", sourceVolume));
        snapshot = csi.createSnapshot(CreateSnapshotRequest.newBuilder().setName("fault-snap").setSourceVolumeId(sourceVolume).build())
                .getSnapshot().getSnapshotId();
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    static ControllerGrpc.ControllerBlockingStub controller() {
        return ControllerGrpc.newBlockingStub(cluster.controllerChannel()).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    static Path image(String node, String volumeId) {
        return tmp.resolve(node).resolve("pool").resolve("volumes").resolve(volumeId + ".img");
    }

    static CreateVolumeRequest copyRequest(String name) {
        return ClusterMobilityTest.request(name, "node-b", 128 * MIB, fromSnapshot(snapshot)).build();
    }

    /** Drops node-b's replicas (a cache): the next restore of the snapshot is a full copy again, slow enough to hit. */
    static void forgetReplicas() throws java.io.IOException {
        Path replicas = tmp.resolve("node-b").resolve("pool").resolve("replicas");
        if (!Files.isDirectory(replicas)) return;
        try (Stream<Path> files = Files.list(replicas)) {
            for (Path p : files.toList()) Files.delete(p);
        }
    }

    static CompletableFuture<Volume> createAsync(CreateVolumeRequest request) {
        return CompletableFuture.supplyAsync(() -> controller().createVolume(request).getVolume());
    }

    /** Waits until node-b reports an incoming copy of {@code name} that has moved some bytes, not all. */
    static void awaitMidCopy(String name) throws InterruptedException {
        var status = ClusterStatusGrpc.newBlockingStub(cluster.controllerChannel());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            for (AgentStatus a : status.withDeadlineAfter(10, TimeUnit.SECONDS).getClusterStatus(GetClusterStatusRequest.getDefaultInstance())
                    .getAgentsList()) {
                for (var c : a.getCopiesList()) {
                    if (a.getNodeId().equals("node-b") && c.getIncoming() && c.getName().equals(name) && c.getBytesDone() > 8 * MIB
                            && c.getBytesTotal() > c.getBytesDone()) {
                        assertEquals("node-a", c.getPeerNodeId());
                        assertEquals(DATA_MIB * MIB, c.getBytesTotal(), "the source's allocated bytes");
                        return;
                    }
                }
            }
            Thread.sleep(100);
        }
        fail("no copy of " + name + " in progress on node-b");
    }

    /** Volume ids the cluster lists on a node, and the images that node's pool holds: the same, and nothing in .tmp. */
    static void nothingLeaked() throws Exception {
        cluster.awaitEveryNode();
        Set<String> listed = new TreeSet<>();
        String token = "";
        do {
            ListVolumesResponse page = controller().listVolumes(ListVolumesRequest.newBuilder().setStartingToken(token).build());
            page.getEntriesList().forEach(e -> listed.add(e.getVolume().getVolumeId()));
            token = page.getNextToken();
        } while (!token.isEmpty());
        for (String node : List.of("node-a", "node-b")) {
            Path pool = tmp.resolve(node).resolve("pool");
            try (Stream<Path> images = Files.list(pool.resolve("volumes"))) {
                Set<String> onDisk = images.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".img"))
                        .map(n -> n.substring(0, n.length() - 4)).collect(Collectors.toCollection(TreeSet::new));
                assertEquals(listed.stream().filter(id -> id.endsWith("-" + node)).collect(Collectors.toCollection(TreeSet::new)), onDisk,
                        node + ": every image is a listed volume");
            }
            try (Stream<Path> temp = Files.list(pool.resolve(".tmp"))) {
                assertEquals(List.of(), temp.toList(), node + ": no temporary file");
            }
        }
    }

    /** node-b's metrics endpoint. */
    static String metrics() throws Exception {
        try (var client = java.net.http.HttpClient.newHttpClient()) {
            return client.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        }
    }

    static long copiesLogged(String volumeId) {
        return Pattern.compile("copied \\S+ from node 'node-a' into volume " + Pattern.quote(volumeId))
                .matcher(cluster.agent("node-b").child.stderr()).results().count();
    }

    static void assertCopied(Volume v) throws Exception {
        assertTrue(v.getVolumeId().endsWith("-node-b"), v.toString());
        assertArrayEquals(expected, ClusterMobilityTest.digest(image("node-b", v.getVolumeId())), "the copy holds the snapshot's bytes");
    }

    @Test
    void aRetryWhileTheCopyRunsJoinsIt() throws Exception {
        forgetReplicas();
        var first = createAsync(copyRequest("fault-join"));
        awaitMidCopy("fault-join");
        String metrics = metrics();
        assertTrue(metrics.contains("csi4j_copies_running{direction=\"in\"} 1"), metrics);
        assertTrue(metrics.contains("csi4j_copy_incoming_bytes{of=\"total\"} " + DATA_MIB * MIB), metrics);
        var second = createAsync(copyRequest("fault-join"));
        Volume a = first.get(120, TimeUnit.SECONDS);
        Volume b = second.get(120, TimeUnit.SECONDS);
        assertEquals(a.getVolumeId(), b.getVolumeId());
        assertEquals(1, copiesLogged(a.getVolumeId()), "one copy ran");
        assertTrue(metrics().contains("csi4j_copies_running{direction=\"in\"} 0"));
        assertCopied(a);
        nothingLeaked();
    }

    @Test
    void theSourceAgentKilledMidCopy() throws Exception {
        forgetReplicas();
        var attempt = createAsync(copyRequest("fault-src-kill"));
        awaitMidCopy("fault-src-kill");
        cluster.agent("node-a").child.kill();
        assertFails(attempt);
        cluster.agent("node-a").start();
        cluster.awaitEveryNode();
        assertCopied(controller().createVolume(copyRequest("fault-src-kill")).getVolume());
        nothingLeaked();
    }

    @Test
    void theTargetAgentKilledMidCopy() throws Exception {
        forgetReplicas();
        var attempt = createAsync(copyRequest("fault-dst-kill"));
        awaitMidCopy("fault-dst-kill");
        cluster.agent("node-b").child.kill();
        assertFails(attempt);
        cluster.agent("node-b").start();
        cluster.awaitEveryNode();
        assertCopied(controller().createVolume(copyRequest("fault-dst-kill")).getVolume());
        nothingLeaked();
    }

    @Test
    void theControllerKilledMidCopyAndACloneAfterIt() throws Exception {
        forgetReplicas();
        var attempt = createAsync(copyRequest("fault-ctl-kill"));
        awaitMidCopy("fault-ctl-kill");
        cluster.controller.kill();
        assertFails(attempt);
        cluster.restartController();
        cluster.awaitEveryNode();
        Volume v = controller().createVolume(copyRequest("fault-ctl-kill")).getVolume();   // joins the copy still running
        assertCopied(v);
        assertEquals(1, copiesLogged(v.getVolumeId()), "the retry joined the copy the kill left running");
        Volume clone = controller().createVolume(ClusterMobilityTest.request("fault-clone", "node-b", 128 * MIB, fromVolume(sourceVolume))
                .build()).getVolume();
        assertCopied(clone);
        nothingLeaked();
    }

    private static void assertFails(CompletableFuture<Volume> attempt) throws Exception {
        try {
            Volume v = attempt.get(120, TimeUnit.SECONDS);
            fail("the create survived the kill: " + v);
        } catch (java.util.concurrent.ExecutionException e) {
            assertTrue(e.getCause() instanceof StatusRuntimeException, e.toString());
        }
    }

    @Test
    void anIncrementalRestoreSendsOnlyTheChangedRanges() throws Exception {
        var csi = controller();
        String volume = csi.createVolume(ClusterMobilityTest.request("inc-src", "node-a", 64 * MIB, null).build()).getVolume().getVolumeId();
        byte[] data = new byte[(int) MIB];
        var random = new Random(11);
        try (var ch = FileChannel.open(image("node-a", volume), StandardOpenOption.WRITE)) {
            for (int i = 0; i < 16; i++) {
                random.nextBytes(data);
                ch.write(ByteBuffer.wrap(data), i * 4 * MIB);
            }
            ch.force(true);
        }
        String first = csi.createSnapshot(CreateSnapshotRequest.newBuilder().setName("inc-1").setSourceVolumeId(volume).build())
                .getSnapshot().getSnapshotId();
        Volume full = csi.createVolume(ClusterMobilityTest.request("inc-copy-1", "node-b", 64 * MIB, fromSnapshot(first)).build()).getVolume();
        assertEquals(16 * MIB, bytesLogged(full.getVolumeId(), ""), "the first restore sends the allocated data");
        try (var ch = FileChannel.open(image("node-a", volume), StandardOpenOption.WRITE)) {
            random.nextBytes(data);
            ch.write(ByteBuffer.wrap(data), 2 * MIB);        // a new range
            ch.write(ByteBuffer.wrap(data), 8 * MIB);        // over an old one
            ch.force(true);
        }
        byte[] second = ClusterMobilityTest.digest(image("node-a", volume));
        String next = csi.createSnapshot(CreateSnapshotRequest.newBuilder().setName("inc-2").setSourceVolumeId(volume).build())
                .getSnapshot().getSnapshotId();
        Volume incremental = csi.createVolume(ClusterMobilityTest.request("inc-copy-2", "node-b", 64 * MIB, fromSnapshot(next)).build())
                .getVolume();
        long sent = bytesLogged(incremental.getVolumeId(), " changed since " + first);
        assertTrue(sent >= 2 * MIB && sent <= 4 * MIB, "only about the two changed MiB travel, not 18: " + sent);
        assertArrayEquals(second, ClusterMobilityTest.digest(image("node-b", incremental.getVolumeId())), "byte for byte");
        nothingLeaked();
    }

    @Test
    void aPeerOfAnotherCaIsRefusedTheData() throws Exception {
        var intruder = TestCertificates.authority(tmp.resolve("other-pki"), "other").issue("intruder");
        var channel = io.csi4j.sdk.server.Channels.builder(new io.csi4j.sdk.server.Endpoint.Tcp("127.0.0.1", cluster.agent("node-a").port),
                intruder, "127.0.0.1").build();
        try {
            var e = org.junit.jupiter.api.Assertions.assertThrows(StatusRuntimeException.class, () ->
                    io.csi4j.proto.cluster.NodeAgentGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS)
                            .readSource(io.csi4j.proto.cluster.ReadSourceRequest.newBuilder().setSnapshotId(snapshot).build())
                            .forEachRemaining(c -> {}));
            assertEquals(io.grpc.Status.Code.UNAVAILABLE, e.getStatus().getCode(), "refused at the handshake: " + e.getStatus());
        } finally {
            channel.shutdownNow();
        }
    }

    /** The data bytes node-b's log says the copy into {@code volumeId} received ({@code suffix}: what follows the count). */
    static long bytesLogged(String volumeId, String suffix) {
        var m = Pattern.compile("into volume " + Pattern.quote(volumeId) + ": (\\d+) bytes" + Pattern.quote(suffix) + " in ")
                .matcher(cluster.agent("node-b").child.stderr());
        assertTrue(m.find(), "no copy into " + volumeId + " logged");
        return Long.parseLong(m.group(1));
    }
}
