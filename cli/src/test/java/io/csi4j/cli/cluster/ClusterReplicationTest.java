package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.ControllerGetVolumeRequest;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.proto.csi.Topology;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.proto.csi.VolumeContentSource;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replicated volumes (issue 28, docs/replication.md) with real processes: three image-engine agents over mutual TLS
 * on loopback and a controller. Creation makes every replica under one id naming every replica's node; the controller
 * routes to the primary by asking the nodes; a secondary refuses writable use; deletion removes every replica's files.
 */
class ClusterReplicationTest {
    static final List<String> NODES = List.of("node-a", "node-b", "node-c");
    static final long MIB = 1L << 20;

    @TempDir
    static Path tmp;
    static ProcessCluster cluster;
    static ControllerGrpc.ControllerBlockingStub controller;
    static final Map<String, ManagedChannel> NODE_CHANNELS = new HashMap<>();
    static final Map<String, String> METRICS = new HashMap<>();

    /** The value of {@code name{volume,node}} on {@code node}'s agent metrics; empty if the series is absent. */
    static java.util.Optional<Double> replicaMetric(String node, String name, String volume) throws Exception {
        String page = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://" + METRICS.get(node) + "/metrics")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        String prefix = name + "{volume=\"" + volume + "\",node=\"" + node + "\"} ";
        return page.lines().filter(l -> l.startsWith(prefix)).findFirst().map(l -> Double.parseDouble(l.substring(prefix.length())));
    }

    @BeforeAll
    static void start() throws Exception {
        Privileged.requireRoot();
        var flags = List.of("--engine", "image", "--pool-size", "1G", "--copy-bandwidth", "64M");
        // each agent its own metrics address: the replica round metrics are on the secondary's agent
        cluster = new ProcessCluster(tmp);
        try {
            for (String n : NODES) {
                String metrics = "127.0.0.1:" + ProcessCluster.freePort();
                METRICS.put(n, metrics);
                var agentFlags = new ArrayList<>(flags);
                agentFlags.addAll(List.of("--metrics-address", metrics));
                cluster.addAgent(n, n, agentFlags).start();
            }
            cluster.startController(List.of());
            cluster.awaitEveryNode();
        } catch (Exception | Error e) {
            cluster.close();
            throw e;
        }
        controller = ControllerGrpc.newBlockingStub(cluster.controllerChannel()).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stop() throws Exception {
        NODE_CHANNELS.values().forEach(ManagedChannel::shutdownNow);
        AGENT_CHANNELS.values().forEach(ManagedChannel::shutdownNow);
        if (cluster != null) cluster.close();
    }

    static ControllerGrpc.ControllerBlockingStub csi() {
        return ControllerGrpc.newBlockingStub(cluster.controllerChannel()).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    static NodeGrpc.NodeBlockingStub node(String nodeId) {
        var channel = NODE_CHANNELS.computeIfAbsent(nodeId, id -> Channels.connect(Endpoint.parse("unix://" + tmp.resolve(id).resolve("csi.sock"))));
        return NodeGrpc.newBlockingStub(channel).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    static VolumeCapability ext4() {
        return VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.newBuilder().setFsType("ext4"))
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
    }

    static CreateVolumeRequest.Builder replicated(String name, int replicas) {
        return replicated(name, replicas, "5s");
    }

    static CreateVolumeRequest.Builder replicated(String name, int replicas, String interval) {
        return CreateVolumeRequest.newBuilder().setName(name).addVolumeCapabilities(ext4())
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(64 * MIB))
                .putParameters("csi4j.io/replicas", Integer.toString(replicas))
                .putParameters("csi4j.io/replication-interval", interval);
    }

    static List<String> topologyNodes(Volume v) {
        return v.getAccessibleTopologyList().stream().map(Topology::getSegmentsMap)
                .map(m -> m.get("topology.csi4j.io/node")).toList();
    }

    /** Every file under a node's pool volumes and replication directories whose name mentions {@code id}. */
    static List<String> files(String node, String id) throws Exception {
        List<String> found = new ArrayList<>();
        for (Path dir : List.of(tmp.resolve(node).resolve("pool").resolve("volumes"), tmp.resolve(node).resolve("replication"),
                tmp.resolve(node).resolve("pool").resolve(".tmp"))) {
            if (!Files.isDirectory(dir)) continue;
            try (Stream<Path> list = Files.list(dir)) {
                list.filter(p -> p.getFileName().toString().contains(id)).forEach(p -> found.add(p.toString()));
            }
        }
        return found;
    }

    static String role(String node, String id) throws Exception {
        Path state = tmp.resolve(node).resolve("replication").resolve(id + ".json");
        if (!Files.exists(state)) return "none";
        String text = Files.readString(state);
        for (String role : List.of("PRIMARY", "SECONDARY", "FENCED")) if (text.contains("\"" + role + "\"")) return role;
        return text;
    }

    static Path stage(String node, String id) throws Exception {
        Path staging = Files.createDirectories(tmp.resolve("staging-" + node).resolve(id));
        node(node).nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(staging.toString()).setVolumeCapability(ext4()).build());
        return staging;
    }

    static Path publish(String node, String id, Path staging) throws Exception {
        Path target = tmp.resolve("target-" + node).resolve(id);
        Files.createDirectories(target.getParent());
        node(node).nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(ext4()).build());
        return target;
    }

    static void unpublishAndUnstage(String node, String id) {
        node(node).nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id)
                .setTargetPath(tmp.resolve("target-" + node).resolve(id).toString()).build());
        node(node).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(tmp.resolve("staging-" + node).resolve(id).toString()).build());
        csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(node).build());
    }

    static void controllerPublish(String node, String id) {
        csi().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(node)
                .setVolumeCapability(ext4()).build());
    }

    static Status.Code code(Runnable call) {
        return assertThrows(StatusRuntimeException.class, call::run).getStatus().getCode();
    }

    @Test
    void createRoutesFencesAndDeletesEveryReplica() throws Exception {
        Volume v = csi().createVolume(replicated("rep-life", 2).build()).getVolume();
        String id = v.getVolumeId();
        ReplicatedVolumeId parsed = ReplicatedVolumeId.parse(id).orElseThrow(() -> new AssertionError("not a replicated id: " + id));
        assertEquals(2, parsed.replicas());
        String primary = parsed.tags().get(0);
        String secondary = parsed.tags().get(1);
        assertNotEquals(primary, secondary);
        assertEquals(List.of(primary, secondary), topologyNodes(v), "accessible_topology lists every replica's node");
        assertEquals(64 * MIB, v.getCapacityBytes());
        assertEquals("PRIMARY", role(primary, id));
        assertEquals("SECONDARY", role(secondary, id));
        assertTrue(Files.exists(tmp.resolve(primary).resolve("pool").resolve("volumes").resolve(id + ".img")));
        String third = NODES.stream().filter(n -> !parsed.heldBy(n)).findFirst().orElseThrow();
        assertEquals(List.of(), files(third, id), "the node holding no replica has nothing of it");

        // ListVolumes through the controller names it once (from the primary)
        var listed = csi().listVolumes(io.csi4j.proto.csi.ListVolumesRequest.getDefaultInstance()).getEntriesList().stream()
                .filter(e -> e.getVolume().getVolumeId().equals(id)).toList();
        assertEquals(1, listed.size(), "listed once");
        assertEquals(List.of(primary, secondary), topologyNodes(listed.get(0).getVolume()), "listed on every replica's node");
        // a retry by name: the same id on the same nodes
        assertEquals(id, csi().createVolume(replicated("rep-life", 2).build()).getVolume().getVolumeId());
        // routed to the primary: ControllerGetVolume answers from it
        Volume got = csi().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build()).getVolume();
        assertEquals(id, got.getVolumeId());
        assertEquals(List.of(primary, secondary), topologyNodes(got), "ControllerGetVolume names every replica's node");

        // fencing: the secondary refuses a writable stage, clearly
        var refused = assertThrows(StatusRuntimeException.class, () -> stage(secondary, id));
        assertEquals(Status.Code.FAILED_PRECONDITION, refused.getStatus().getCode(), refused.getStatus().toString());
        assertTrue(refused.getStatus().getDescription().contains("only the primary"), refused.getStatus().toString());

        // published and staged on the primary: the delete is refused and nothing is deleted anywhere
        controllerPublish(primary, id);
        Path staging = stage(primary, id);
        publish(primary, id, staging);
        assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build())));
        assertEquals("SECONDARY", role(secondary, id));
        assertEquals("PRIMARY", role(primary, id));
        unpublishAndUnstage(primary, id);

        csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        for (String n : NODES) assertEquals(List.of(), files(n, id), "nothing of " + id + " is left on " + n);
        csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());      // again: OK
        assertEquals(Status.Code.NOT_FOUND, code(() -> csi().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build())));
    }

    @Test
    void threeReplicasSpreadOverThreeNodesAndFourAreRefused() throws Exception {
        Map<String, List<String>> before = new HashMap<>();
        for (String n : NODES) before.put(n, everything(n));
        Volume v = csi().createVolume(replicated("rep-three", 3).build()).getVolume();
        String id = v.getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        assertEquals(3, parsed.replicas());
        assertEquals(NODES.stream().sorted().toList(), topologyNodes(v).stream().sorted().toList(), "one replica per node");
        assertEquals("PRIMARY", role(parsed.tags().get(0), id));
        assertEquals("SECONDARY", role(parsed.tags().get(1), id));
        assertEquals("SECONDARY", role(parsed.tags().get(2), id));
        csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        for (String n : NODES) assertEquals(before.get(n), everything(n), "nothing of " + id + " is left on " + n);
        // more replicas than the parameter allows: INVALID_ARGUMENT, nothing made
        assertEquals(Status.Code.INVALID_ARGUMENT, code(() -> csi().createVolume(replicated("rep-four", 4).build())));
        for (String n : NODES) assertEquals(before.get(n), everything(n));
    }

    @Test
    void aFailedCreateLeavesNothingOnAnyNode() throws Exception {
        Map<String, List<String>> before = new HashMap<>();
        for (String n : NODES) before.put(n, everything(n));
        // from a content source the primary is made first, on the source's node: a source that does not exist is
        // refused there after its state record was written, and every record is rolled back
        var source = VolumeContentSource.newBuilder().setVolume(VolumeContentSource.VolumeSource.newBuilder()
                .setVolumeId("vol-aaaaaaaaaaaaaaaa-node-a")).build();
        var failed = assertThrows(StatusRuntimeException.class, () -> csi().createVolume(replicated("rep-failed", 3)
                .setVolumeContentSource(source).build()));
        assertEquals(Status.Code.NOT_FOUND, failed.getStatus().getCode(), failed.getStatus().toString());
        for (String n : NODES) assertEquals(before.get(n), everything(n), "nothing is left on " + n);
    }

    /** Every file under a node's pool and replication directory (the catalog lives beside them, not inside). */
    static List<String> everything(String node) throws Exception {
        List<String> found = new ArrayList<>();
        for (Path dir : List.of(tmp.resolve(node).resolve("pool"), tmp.resolve(node).resolve("replication"))) {
            if (!Files.isDirectory(dir)) continue;
            try (Stream<Path> walk = Files.walk(dir)) {
                walk.filter(Files::isRegularFile).filter(p -> !p.toString().contains("lost+found")).forEach(p -> found.add(p.toString()));
            }
        }
        java.util.Collections.sort(found);
        return found;
    }

    static final Map<String, ManagedChannel> AGENT_CHANNELS = new HashMap<>();

    /** One replication round now: the secondary's agent pulls from the primary's (NodeAgent.SyncReplica, mutual TLS). */
    static io.csi4j.proto.cluster.SyncReplicaResponse round(String secondary, String primary, String id) {
        var channel = AGENT_CHANNELS.computeIfAbsent(secondary, n -> Channels.builder(new Endpoint.Tcp("127.0.0.1",
                cluster.agent(n).port), cluster.controllerTls, "127.0.0.1").build());
        var from = io.csi4j.proto.cluster.PeerAgent.newBuilder().setNodeId(primary).setAddress(cluster.agent(primary).address())
                .setAuthority("127.0.0.1").build();
        return io.csi4j.proto.cluster.NodeAgentGrpc.newBlockingStub(channel).withDeadlineAfter(120, TimeUnit.SECONDS)
                .syncReplica(io.csi4j.proto.cluster.SyncReplicaRequest.newBuilder().setVolumeId(id).setPrimary(from).build());
    }

    static final int RECORD = 128;

    /** Records {@code from..to-1}: sequence number, seeded random payload, CRC32 of both; fsynced every 64 and at the end. */
    static void writeRecords(Path file, int from, int to) throws Exception {
        try (var ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.WRITE)) {
            for (int seq = from; seq < to; seq++) {
                ch.write(java.nio.ByteBuffer.wrap(record(seq)), (long) seq * RECORD);
                if (seq % 64 == 63) ch.force(true);
            }
            ch.force(true);
        }
    }

    static byte[] record(int seq) {
        return ReplicaFixture.record(seq, RECORD);
    }

    /** Every record 0..count-1 is there, byte-identical, and nothing after it. */
    static void assertRecords(Path file, int count) throws Exception {
        byte[] all = Files.readAllBytes(file);
        assertEquals((long) count * RECORD, all.length, "the file holds exactly the records written");
        for (int seq = 0; seq < count; seq++) {
            byte[] got = java.util.Arrays.copyOfRange(all, seq * RECORD, (seq + 1) * RECORD);
            org.junit.jupiter.api.Assertions.assertArrayEquals(record(seq), got, "record " + seq);
        }
    }

    /** The point a node's copy holds, from its durable state ("" before the first round). */
    static String point(String node, String id) throws Exception {
        Path state = tmp.resolve(node).resolve("replication").resolve(id + ".json");
        if (!Files.exists(state)) return "";
        var m = java.util.regex.Pattern.compile("\"point\"\\s*:\\s*\"([^\"]*)\"").matcher(Files.readString(state));
        return m.find() ? m.group(1) : "";
    }

    /** Waits, within generous bounds, until the node's copy holds a point other than {@code not}. */
    static String awaitPointOtherThan(String node, String id, String not) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            String p = point(node, id);
            if (!p.isEmpty() && !p.equals(not)) return p;
            if (System.nanoTime() > deadline) throw new AssertionError("no scheduled round on " + node + " within 120 s; point " + p);
            Thread.sleep(500);
        }
    }

    @Test
    void roundsRunEveryIntervalAndADeleteStopsThemForGood() throws Exception {
        Map<String, List<String>> before = new HashMap<>();
        for (String n : NODES) before.put(n, everything(n));
        String id = csi().createVolume(replicated("rep-rounds", 2, "5s").build()).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0);
        String b = parsed.tags().get(1);
        controllerPublish(a, id);
        Path target = publish(a, id, stage(a, id));
        writeRecords(target.resolve("records"), 0, 1000);
        String first = awaitPointOtherThan(b, id, "");            // nobody asked: the controller's scheduler did
        writeRecords(target.resolve("records"), 1000, 2000);
        String second = awaitPointOtherThan(b, id, first);
        assertNotEquals(first, second);
        unpublishAndUnstage(a, id);
        // rounds keep running until the delete, which waits for a running one and ends them all
        csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        for (String n : NODES) assertEquals(before.get(n), everything(n), "nothing of " + id + " is left on " + n);
        Thread.sleep(12_000);                                       // two intervals more: no round brings anything back
        for (String n : NODES) assertEquals(before.get(n), everything(n), "nothing of " + id + " came back on " + n);
    }

    @Test
    void aPlannedMoveKeepsEveryRecordAndFencesTheOldCopy() throws Exception {
        Map<String, List<String>> before = new HashMap<>();
        for (String n : NODES) before.put(n, everything(n));
        // a day's interval: no scheduled round interferes with the rounds this test starts itself
        String id = csi().createVolume(replicated("rep-move", 2, "24h").build()).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0);
        String b = parsed.tags().get(1);

        controllerPublish(a, id);
        Path target = publish(a, id, stage(a, id));
        Path records = target.resolve("records");
        writeRecords(records, 0, 4000);

        // a round while the workload is published: a full copy first (b holds no point yet)
        var first = round(b, a, id);
        assertEquals("", first.getBasePoint(), "the first round is a full copy");
        assertTrue(first.getBytesReceived() > 0, first.toString());
        assertTrue(Files.readString(tmp.resolve(b).resolve("replication").resolve(id + ".json")).contains(first.getPoint()),
                "the secondary records the point it holds");
        writeRecords(records, 4000, 4500);
        // the next round is a delta against the point b holds
        var second = round(b, a, id);
        assertEquals(first.getPoint(), second.getBasePoint(), "the second round pulls only what changed: " + second);
        assertTrue(second.getBytesReceived() < first.getBytesReceived(), first + " then " + second);
        // the secondary's agent exports its last round: these bytes, a duration, and a lag of seconds at most
        assertEquals(second.getBytesReceived(), replicaMetric(b, "csi4j_replica_last_round_bytes", id).orElseThrow().longValue());
        assertTrue(second.getBytesReceived() > 0, second.toString());
        assertTrue(replicaMetric(b, "csi4j_replica_last_round_seconds", id).orElseThrow() > 0);
        double lag = replicaMetric(b, "csi4j_replica_lag_seconds", id).orElseThrow();
        assertTrue(lag >= 0 && lag < 60, "lag " + lag);
        assertTrue(replicaMetric(a, "csi4j_replica_lag_seconds", id).isEmpty(), "the primary has no lag");
        // points are internal: not listed, not deletable as snapshots
        assertEquals(0, csi().listSnapshots(io.csi4j.proto.csi.ListSnapshotsRequest.newBuilder().setSourceVolumeId(id).build()).getEntriesCount());
        assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> csi().deleteSnapshot(
                io.csi4j.proto.csi.DeleteSnapshotRequest.newBuilder().setSnapshotId(second.getPoint()).build())));
        writeRecords(records, 4500, 5000);           // after the last round: only the handoff's final point has them

        // still published on a: publishing on b is FAILED_PRECONDITION, nothing changes
        assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> controllerPublish(b, id)));
        assertEquals("PRIMARY", role(a, id));
        unpublishAndUnstage(a, id);

        long started = System.nanoTime();
        controllerPublish(b, id);                     // the handoff: final point, b pulls it, b primary at epoch 2
        Path moved = publish(b, id, stage(b, id));
        System.out.printf("planned move of %s from %s to %s: %d ms%n", id, a, b, (System.nanoTime() - started) / 1_000_000);
        assertRecords(moved.resolve("records"), 5000);
        assertEquals("PRIMARY", role(b, id));
        assertEquals("SECONDARY", role(a, id));
        assertTrue(replicaMetric(b, "csi4j_replica_lag_seconds", id).isEmpty(), "promoted: b has no lag any more");
        controllerPublish(b, id);                     // idempotent

        // the superseded copy refuses writable use; the volume cannot go back while published on b
        var fenced = assertThrows(StatusRuntimeException.class, () -> stage(a, id));
        assertEquals(Status.Code.FAILED_PRECONDITION, fenced.getStatus().getCode(), fenced.getStatus().toString());
        assertTrue(fenced.getStatus().getDescription().contains("epoch 2"), fenced.getStatus().toString());
        assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> controllerPublish(a, id)));
        assertEquals("PRIMARY", role(b, id));

        unpublishAndUnstage(b, id);
        csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        for (String n : NODES) assertEquals(before.get(n), everything(n), "nothing of " + id + " is left on " + n);
    }
}
