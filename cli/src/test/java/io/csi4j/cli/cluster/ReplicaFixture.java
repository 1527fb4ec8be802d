package io.csi4j.cli.cluster;

import io.csi4j.proto.cluster.NodeAgentGrpc;
import io.csi4j.proto.cluster.PeerAgent;
import io.csi4j.proto.cluster.SyncReplicaRequest;
import io.csi4j.proto.cluster.SyncReplicaResponse;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.proto.csi.Topology;
import io.csi4j.proto.csi.TopologyRequirement;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A controller and three image-engine agents as real processes over mutual TLS on loopback, each agent with its own
 * metrics address, for the replicated-volume fault tests (the set-up of ClusterReplicationTest, as an instance so that
 * each test class has its own cluster; started and stopped per class by {@link ClassCluster}), "kubelet" on each node
 * (stage and publish an ext4 mount through the node's own socket, staging and target paths under the test's directory),
 * and what those tests look at on disk and in each agent's catalog.
 */
final class ReplicaFixture implements AutoCloseable {
    static final List<String> NODES = List.of("node-a", "node-b", "node-c");
    static final long MIB = 1L << 20;

    final Path tmp;
    final ProcessCluster cluster;
    final Map<String, String> metrics = new HashMap<>();
    private final Map<String, ManagedChannel> agentChannels = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<String, ManagedChannel> nodeChannels = new java.util.concurrent.ConcurrentHashMap<>();

    /** {@code agentFlags} come after the image engine and a 1 GiB pool. */
    ReplicaFixture(Path tmp, List<String> agentFlags, List<String> controllerFlags) throws Exception {
        this(tmp, node -> agentFlags, controllerFlags);
    }

    /** {@code agentFlags} of each node (e.g. its --topology) come after the image engine and a 1 GiB pool. */
    ReplicaFixture(Path tmp, java.util.function.Function<String, List<String>> agentFlagsOf, List<String> controllerFlags) throws Exception {
        this(tmp, NODES, agentFlagsOf, controllerFlags);
    }

    /** Other nodes than {@link #NODES}; a node whose flags give its own --pool-size has that instead of 1 GiB. */
    ReplicaFixture(Path tmp, List<String> nodes, java.util.function.Function<String, List<String>> agentFlagsOf, List<String> controllerFlags)
            throws Exception {
        this.tmp = tmp;
        this.cluster = new ProcessCluster(tmp);
        try {
            for (String n : nodes) {
                String address = "127.0.0.1:" + ProcessCluster.freePort();
                metrics.put(n, address);
                var own = agentFlagsOf.apply(n);
                var flags = new ArrayList<>(List.of("--engine", "image", "--metrics-address", address));
                if (!own.contains("--pool-size")) flags.addAll(List.of("--pool-size", "1G"));
                flags.addAll(own);
                cluster.addAgent(n, n, flags).start();
            }
            cluster.startController(controllerFlags);
            cluster.awaitEveryNode();
        } catch (Exception | Error e) {
            cluster.close();
            throw e;
        }
    }

    ControllerGrpc.ControllerBlockingStub csi() {
        return ControllerGrpc.newBlockingStub(cluster.controllerChannel()).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    static VolumeCapability ext4() {
        return VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.newBuilder().setFsType("ext4"))
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
    }

    /** A day's interval: rounds only when a test starts them. */
    static CreateVolumeRequest replicated(String name, int replicas, long bytes) {
        return replicated(name, replicas, bytes, "24h");
    }

    static CreateVolumeRequest replicated(String name, int replicas, long bytes, String interval) {
        return CreateVolumeRequest.newBuilder().setName(name).addVolumeCapabilities(ext4())
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(bytes))
                .putParameters("csi4j.io/replicas", Integer.toString(replicas))
                .putParameters("csi4j.io/replication-interval", interval)
                .build();
    }

    /** A volume of {@link #hourVolume}: the controller stub that made it (its deadline runs from then), its id, its secondary's node. */
    record HourVolume(ControllerGrpc.ControllerBlockingStub csi, String id, String secondary) {}

    /**
     * A step of the two-node tests with a cluster of their own: a 64 MiB ext4 volume of 2 replicas and an hour's interval
     * (no round by itself while the test runs) created through {@code cluster}'s controller; the secondary is the id's
     * second node.
     */
    static HourVolume hourVolume(ProcessCluster cluster, String name) {
        var csi = ControllerGrpc.newBlockingStub(cluster.controllerChannel()).withDeadlineAfter(120, TimeUnit.SECONDS);
        String id = csi.createVolume(ClusterVolumeReplicationTest.volume(name).putParameters("csi4j.io/replicas", "2")
                .putParameters("csi4j.io/replication-interval", "1h").build()).getVolume().getVolumeId();
        return new HourVolume(csi, id, io.csi4j.driver.id.ReplicatedVolumeId.parse(id).orElseThrow().tags().get(1));
    }

    /** {@code csi4j <args> --endpoint <this cluster's controller socket>}, run as the CLI runs (ClusterStatusTest.cli). */
    ClusterStatusTest.Run cli(String... args) {
        var all = new java.util.ArrayList<>(List.of(args));
        all.addAll(List.of("--endpoint", cluster.controllerSocket()));
        return ClusterStatusTest.cli(all.toArray(String[]::new));
    }

    /** One replication round now: the secondary's agent pulls from the primary's (NodeAgent.SyncReplica). */
    SyncReplicaResponse round(String secondary, String primary, String id) {
        var from = PeerAgent.newBuilder().setNodeId(primary).setAddress(cluster.agent(primary).address()).setAuthority("127.0.0.1").build();
        return agent(secondary).withDeadlineAfter(120, TimeUnit.SECONDS)
                .syncReplica(SyncReplicaRequest.newBuilder().setVolumeId(id).setPrimary(from).build());
    }

    /** The agent link of a node, as the controller dials it (a new channel after the agent restarted is not needed: gRPC reconnects). */
    NodeAgentGrpc.NodeAgentBlockingStub agent(String node) {
        var channel = agentChannels.computeIfAbsent(node, n -> Channels.builder(new Endpoint.Tcp("127.0.0.1",
                cluster.agent(n).port), cluster.controllerTls, "127.0.0.1").build());
        return NodeAgentGrpc.newBlockingStub(channel);
    }

    /** The requisite and preferred topology of that one node (Kubernetes' --strict-topology for a pod there). */
    static TopologyRequirement onlyOn(String node) {
        var t = Topology.newBuilder().putSegments("topology.csi4j.io/node", node).build();
        return TopologyRequirement.newBuilder().addRequisite(t).addPreferred(t).build();
    }

    /** The nodes of a volume's accessible topology, in its order (a replicated volume's primary first). */
    static List<String> nodes(Volume v) {
        return v.getAccessibleTopologyList().stream().map(Topology::getSegmentsMap).map(m -> m.get("topology.csi4j.io/node")).toList();
    }

    /** The node's CSI socket (one channel a node, closed with the fixture). */
    NodeGrpc.NodeBlockingStub node(String nodeId) {
        var channel = nodeChannels.computeIfAbsent(nodeId, n -> Channels.connect(Endpoint.parse("unix://" + dataDir(n).resolve("csi.sock"))));
        return NodeGrpc.newBlockingStub(channel).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    void controllerPublish(String node, String id) {
        csi().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(node)
                .setVolumeCapability(ext4()).build());
    }

    /** NodeStageVolume of an ext4 mount at {@code staging-<node>/<id>} under the test's directory; returns that path. */
    Path stage(String node, String id) throws Exception {
        Path staging = Files.createDirectories(tmp.resolve("staging-" + node).resolve(id));
        node(node).nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(staging.toString()).setVolumeCapability(ext4()).build());
        return staging;
    }

    /** NodePublishVolume at {@code target-<node>/<id>} under the test's directory; returns that path. */
    Path publish(String node, String id, Path staging) throws Exception {
        Path target = tmp.resolve("target-" + node).resolve(id);
        Files.createDirectories(target.getParent());
        node(node).nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(ext4()).build());
        return target;
    }

    /** NodeUnpublishVolume, NodeUnstageVolume, then ControllerUnpublishVolume: the pod on {@code node} is gone. */
    void unpublishAndUnstage(String node, String id) {
        node(node).nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id)
                .setTargetPath(tmp.resolve("target-" + node).resolve(id).toString()).build());
        node(node).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(tmp.resolve("staging-" + node).resolve(id).toString()).build());
        csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(node).build());
    }

    /** NodeUnstageVolume of {@link #stage}'s path (nothing published there), then ControllerUnpublishVolume. */
    void unstageAndControllerUnpublish(String node, String id) {
        node(node).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(tmp.resolve("staging-" + node).resolve(id).toString()).build());
        csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(node).build());
    }

    /** The records of the kill and stage tests: 4 KiB each, a block of the volume's file system. */
    static final int RECORD = 4096;

    static byte[] record(int seq) {
        return record(seq, RECORD);
    }

    /**
     * Record {@code seq} of {@code size} bytes: sequence number, seeded random payload, CRC32 of both, so a torn or
     * misplaced record does not check (ClusterReplicationTest's records are the same at 128 bytes).
     */
    static byte[] record(int seq, int size) {
        var b = java.nio.ByteBuffer.allocate(size);
        b.putLong(seq);
        byte[] payload = new byte[size - 16];
        new java.util.Random(seq * 31L + 7).nextBytes(payload);
        b.put(payload);
        var crc = new java.util.zip.CRC32();
        crc.update(b.array(), 0, size - 8);
        b.putLong(crc.getValue());
        return b.array();
    }

    /** Records written in order from the start of the file until the first that does not check. */
    static int records(Path file) throws Exception {
        byte[] all = Files.readAllBytes(file);
        int n = 0;
        while ((long) (n + 1) * RECORD <= all.length && java.util.Arrays.equals(record(n), 0, RECORD, all, n * RECORD, (n + 1) * RECORD)) n++;
        return n;
    }

    /**
     * Published and staged on the primary ({@link #controllerPublish}, {@link #stage}, {@link #publish}): records
     * {@code from..to-1} written in its file {@code records}, fsynced every 256 and at the end, then
     * {@link #unpublishAndUnstage}.
     */
    void writeOnPrimary(String primary, String id, int from, int to) throws Exception {
        controllerPublish(primary, id);
        Path staging = stage(primary, id);
        try {
            Path target = publish(primary, id, staging);
            try (var ch = java.nio.channels.FileChannel.open(target.resolve("records"), java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.WRITE)) {
                for (int seq = from; seq < to; seq++) {
                    ch.write(java.nio.ByteBuffer.wrap(record(seq)), (long) seq * RECORD);
                    if (seq % 256 == 255) ch.force(true);
                }
                ch.force(true);
            }
        } finally {
            unpublishAndUnstage(primary, id);
        }
    }

    /**
     * Waits (60 s at most) until the secondary is receiving a round of {@code id} (NodeAgent.ListCopies) and a quarter
     * of it has arrived, with 2 MiB still to come (a round's first second is a burst); {@code round}, when the test
     * started the round itself (else null), fails the wait if it ends first.
     */
    void awaitMidRound(String secondary, String id, java.util.concurrent.CompletableFuture<?> round) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String seen = "nothing";
        while (System.nanoTime() < deadline) {
            if (round != null && round.isDone()) {
                throw new AssertionError("the round of " + id + " on " + secondary + " ended before its middle was seen (last seen: "
                        + seen + "): " + round.handle((ok, failed) -> failed == null ? "OK" : failed.toString()).get());
            }
            try {
                for (var c : agent(secondary).withDeadlineAfter(5, TimeUnit.SECONDS)
                        .listCopies(io.csi4j.proto.cluster.ListCopiesRequest.getDefaultInstance()).getCopiesList()) {
                    seen = c.getName() + " " + c.getBytesDone() + "/" + c.getBytesTotal();
                    if (c.getIncoming() && c.getName().contains(id) && c.getBytesTotal() > 0 && c.getBytesDone() >= c.getBytesTotal() / 4
                            && c.getBytesDone() <= c.getBytesTotal() - 2 * MIB) {
                        System.out.printf("in the middle of a round of %s on %s: %d of %d bytes%n", id, secondary, c.getBytesDone(), c.getBytesTotal());
                        return;
                    }
                }
            } catch (io.grpc.StatusRuntimeException e) {
                // the agent is busy or restarting: ask again
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no round of " + id + " seen in its middle on " + secondary + " within 60 s; last seen: " + seen);
    }

    Path dataDir(String node) {
        return tmp.resolve(node);
    }

    /** Every file under a node's pool and replication directory (the catalog lives beside them, not inside). */
    List<String> everything(String node) throws Exception {
        List<String> found = new ArrayList<>();
        for (Path dir : List.of(dataDir(node).resolve("pool"), dataDir(node).resolve("replication"))) {
            if (!Files.isDirectory(dir)) continue;
            try (Stream<Path> walk = Files.walk(dir)) {
                walk.filter(Files::isRegularFile).filter(p -> !p.toString().contains("lost+found")).forEach(p -> found.add(p.toString()));
            }
        }
        java.util.Collections.sort(found);
        return found;
    }

    /** The files under a node's pool volumes, .tmp and replication directories whose name mentions {@code id}. */
    List<String> files(String node, String id) throws Exception {
        List<String> found = new ArrayList<>();
        for (Path dir : List.of(dataDir(node).resolve("pool").resolve("volumes"), dataDir(node).resolve("pool").resolve(".tmp"),
                dataDir(node).resolve("replication"))) {
            if (!Files.isDirectory(dir)) continue;
            try (Stream<Path> list = Files.list(dir)) {
                list.filter(p -> p.getFileName().toString().contains(id)).forEach(p -> found.add(p.toString()));
            }
        }
        java.util.Collections.sort(found);
        return found;
    }

    /** The files in a node's pool .tmp (a round builds its new image there). */
    List<String> tmpFiles(String node) throws Exception {
        return tmpFiles(dataDir(node));
    }

    /** The files in the pool .tmp of the node whose data directory is {@code dataDir} (also {@link FailoverPair}'s). */
    static List<String> tmpFiles(Path dataDir) throws Exception {
        Path dir = dataDir.resolve("pool").resolve(".tmp");
        if (!Files.isDirectory(dir)) return List.of();
        try (Stream<Path> list = Files.list(dir)) {
            return list.map(Path::toString).sorted().toList();
        }
    }

    /** Rows of {@code id} in a node's catalog: the volume's, and its snapshots' (its points). Read-only, beside the agent. */
    int catalogRows(String node, String id) throws Exception {
        var config = new org.sqlite.SQLiteConfig();
        config.setReadOnly(true);
        config.setBusyTimeout(10_000);
        try (var db = config.createConnection("jdbc:sqlite:" + dataDir(node).resolve("catalog.db"));
             var volumes = db.prepareStatement("SELECT (SELECT count(*) FROM volumes WHERE id = ?) + (SELECT count(*) FROM snapshots WHERE source_volume_id = ?)")) {
            volumes.setString(1, id);
            volumes.setString(2, id);
            try (var rs = volumes.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** Loop devices whose backing file names {@code id}. */
    static List<String> loops(String id) throws Exception {
        var p = new ProcessBuilder("losetup", "-l", "-n", "-O", "NAME,BACK-FILE").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) throw new AssertionError("losetup failed: " + out);
        return out.lines().filter(l -> l.contains(id)).toList();
    }

    /** The role in a node's durable state of {@code id}, "none" without one. */
    String role(String node, String id) throws Exception {
        Path state = dataDir(node).resolve("replication").resolve(id + ".json");
        if (!Files.exists(state)) return "none";
        String text = Files.readString(state);
        for (String role : List.of("PRIMARY", "SECONDARY", "FENCED")) if (text.contains("\"" + role + "\"")) return role;
        return text;
    }

    /** The point a node's copy holds, from its durable state ("" before the first round or without a state). */
    String point(String node, String id) throws Exception {
        return point(dataDir(node), id);
    }

    /** The point in the durable state of {@code id} under the data directory {@code dataDir} (also {@link FailoverPair}'s). */
    static String point(Path dataDir, String id) throws Exception {
        Path state = dataDir.resolve("replication").resolve(id + ".json");
        if (!Files.exists(state)) return "";
        var m = java.util.regex.Pattern.compile("\"point\"\\s*:\\s*\"([^\"]*)\"").matcher(Files.readString(state));
        return m.find() ? m.group(1) : "";
    }

    /** The value of {@code name{volume,node}} on {@code node}'s agent metrics; empty if the series is absent. */
    Optional<Double> replicaMetric(String node, String name, String volume) throws Exception {
        String page;
        try (var http = java.net.http.HttpClient.newHttpClient()) {
            page = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://" + metrics.get(node) + "/metrics"))
                    .timeout(java.time.Duration.ofSeconds(20)).build(), java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        }
        String prefix = name + "{volume=\"" + volume + "\",node=\"" + node + "\"} ";
        return page.lines().filter(l -> l.startsWith(prefix)).findFirst().map(l -> Double.parseDouble(l.substring(prefix.length())));
    }

    @Override
    public void close() throws Exception {
        nodeChannels.values().forEach(ManagedChannel::shutdownNow);
        agentChannels.values().forEach(ManagedChannel::shutdownNow);
        cluster.close();
    }
}
