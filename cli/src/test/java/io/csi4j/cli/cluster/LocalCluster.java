package io.csi4j.cli.cluster;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.plugin.Services;
import io.csi4j.driver.cluster.Agents;
import io.csi4j.driver.cluster.ClusterController;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.plugin.Driver;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.MutualTls;
import io.csi4j.sdk.server.PluginServer;
import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Several node agents and a controller in one JVM, on one machine: separate data directories and node ids,
 * agent endpoints on 127.0.0.1 with mutual TLS from a CA made for the test, the controller on UNIX sockets.
 */
final class LocalCluster implements AutoCloseable {

    /** One node agent: its driver, its node socket (Identity, Node) and its agent endpoint. */
    record Node(String id, Path dataDir, Driver driver, PluginServer server, Endpoint.Tcp agent) {
        String nodeSocket() { return "unix://" + dataDir.resolve("csi.sock"); }
    }

    final Path dir;
    final TestCertificates ca;
    final MutualTls controllerTls;
    final Map<String, Node> nodes = new LinkedHashMap<>();
    final ClusterController controller;
    final PluginServer controllerServer;
    private final List<ManagedChannel> channels = new ArrayList<>();
    /** The deadline the agents' last call of each method (full name) arrived with, as the controller's call carried it. */
    final Map<String, io.grpc.Deadline> agentDeadlines = new java.util.concurrent.ConcurrentHashMap<>();
    /** What the agents' servers count (their chain is built here, around the deadline recorder). */
    private final io.csi4j.sdk.interceptor.CallMetrics agentMetrics = new io.csi4j.sdk.interceptor.CallMetrics();

    private final double overcommit;
    /** Each agent's --copy-bandwidth in bytes per second; 0: unlimited. */
    private final long copyBandwidth;

    private LocalCluster(Path dir, List<String> nodeIds, EngineKind engine, OptionalLong poolSize) throws Exception {
        this(dir, nodeIds, engine, poolSize, 1.0, 0);
    }

    private LocalCluster(Path dir, List<String> nodeIds, EngineKind engine, OptionalLong poolSize, double overcommit,
                         long copyBandwidth) throws Exception {
        this.dir = dir;
        this.overcommit = overcommit;
        this.copyBandwidth = copyBandwidth;
        this.ca = TestCertificates.authority(dir.resolve("pki"), "cluster");
        MutualTls agentTls = ca.issue("agent");
        this.controllerTls = ca.issue("controller");
        for (String id : nodeIds) {
            OptionalLong pool = nodes.isEmpty() || poolSize.isEmpty() ? poolSize : OptionalLong.of(poolSize.getAsLong() / 2);
            nodes.put(id, startNode(id, engine, pool, agentTls));
        }
        List<Agents.Entry> entries = nodes.values().stream().map(n -> new Agents.Entry(n.agent().host(), n.agent().port())).toList();
        this.controller = new ClusterController(new ClusterController.Config(entries, controllerTls, null, Duration.ofSeconds(60),
                Duration.ofHours(1), DriverConfig.defaults(dir.resolve("controller"), "controller")));
        // on a busy machine a first TLS handshake can outlast the controller's first look; it looks again every 2 s
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!controller.agents().unidentified().isEmpty()) {
            if (System.nanoTime() > deadline) throw new IllegalStateException("agents never answered: " + controller.agents().unidentified());
            Thread.sleep(100);
        }
        Files.createDirectories(dir.resolve("controller"));
        this.controllerServer = PluginServer.builder()
                .listen(Endpoint.parse(controllerSocket()), Services.cluster(controller, Services.Socket.CSI).toArray(BindableService[]::new))
                .listen(Endpoint.parse(controllerAddonsSocket()), Services.cluster(controller, Services.Socket.ADDONS).toArray(BindableService[]::new))
                .onTransportThread(Services.onTransportThread())
                .eventLoops(controller.eventLoops())
                .shutdownGrace(Duration.ofSeconds(2))
                .build().start();
    }

    /** The standard chain behind an interceptor that notes each call's deadline in {@link #agentDeadlines}. */
    private List<io.grpc.ServerInterceptor> withDeadlineRecorder() {
        io.grpc.ServerInterceptor recorder = new io.grpc.ServerInterceptor() {
            @Override
            public <Q, R> io.grpc.ServerCall.Listener<Q> interceptCall(io.grpc.ServerCall<Q, R> call, io.grpc.Metadata headers,
                                                                      io.grpc.ServerCallHandler<Q, R> next) {
                io.grpc.Deadline deadline = io.grpc.Context.current().getDeadline();
                if (deadline != null) agentDeadlines.put(call.getMethodDescriptor().getFullMethodName(), deadline);
                return next.startCall(call, headers);
            }
        };
        List<io.grpc.ServerInterceptor> chain = new ArrayList<>(List.of(recorder));
        chain.addAll(io.csi4j.sdk.interceptor.Interceptors.standard().metrics(agentMetrics).build());
        return chain;
    }

    static LocalCluster start(Path dir, List<String> nodeIds) throws Exception {
        return new LocalCluster(dir, nodeIds, EngineKind.DIR, OptionalLong.empty());
    }

    /**
     * With a private pool of {@code poolSize} for the first node and half that for the others: the first node has
     * the most free capacity, so what is placed by capacity (an empty volume group) lands on it.
     */
    static LocalCluster start(Path dir, List<String> nodeIds, EngineKind engine, OptionalLong poolSize) throws Exception {
        return new LocalCluster(dir, nodeIds, engine, poolSize);
    }

    /** As {@link #start(Path, List, EngineKind, OptionalLong)}, pools promising {@code overcommit} times their size. */
    static LocalCluster start(Path dir, List<String> nodeIds, EngineKind engine, OptionalLong poolSize, double overcommit)
            throws Exception {
        return new LocalCluster(dir, nodeIds, engine, poolSize, overcommit, 0);
    }

    /** As above, each agent's copies bounded to {@code copyBandwidth} bytes per second (a copy that lasts). */
    static LocalCluster start(Path dir, List<String> nodeIds, EngineKind engine, OptionalLong poolSize, double overcommit,
                              long copyBandwidth) throws Exception {
        return new LocalCluster(dir, nodeIds, engine, poolSize, overcommit, copyBandwidth);
    }

    private Node startNode(String id, EngineKind engine, OptionalLong poolSize, MutualTls tls) throws Exception {
        Path data = Files.createDirectories(dir.resolve(id));
        var base = DriverConfig.defaults(data, id);
        var config = new DriverConfig(data, id, engine, poolSize, DriverConfig.Mode.NODE, 0, base.defaultVolumeBytes(),
                overcommit, base.groupDeletePolicy(), true, 64);
        Driver driver = Driver.open(config);
        PluginServer server = PluginServer.builder()
                .listen(Endpoint.parse("unix://" + data.resolve("csi.sock")), driver.csiServices().toArray(BindableService[]::new))
                .listen(Endpoint.parse("tcp://127.0.0.1:0"), tls,
                        driver.agentServices(tls, copyBandwidth == 0
                                ? io.csi4j.driver.mobility.Bandwidth.unlimited() : new io.csi4j.driver.mobility.Bandwidth(copyBandwidth)).toArray(BindableService[]::new))
                .metrics(agentMetrics)
                .interceptors(withDeadlineRecorder())
                .shutdownGrace(Duration.ofSeconds(2))
                .build().start();
        return new Node(id, data, driver, server, (Endpoint.Tcp) server.endpoints().get(1));
    }

    String controllerSocket() { return "unix://" + dir.resolve("controller").resolve("csi.sock"); }
    String controllerAddonsSocket() { return "unix://" + dir.resolve("controller").resolve("csi-addons.sock"); }

    /** A channel to the controller's CSI socket (closed with the cluster). */
    ManagedChannel controllerChannel() {
        return keep(Channels.connect(Endpoint.parse(controllerSocket())));
    }

    ManagedChannel controllerAddonsChannel() {
        return keep(Channels.connect(Endpoint.parse(controllerAddonsSocket())));
    }

    /** A channel to a node's own UNIX socket (Identity, Node). */
    ManagedChannel nodeChannel(String nodeId) {
        return keep(Channels.connect(Endpoint.parse(nodes.get(nodeId).nodeSocket())));
    }

    /** A channel straight to a node's agent endpoint, presenting {@code tls}. */
    ManagedChannel agentChannel(String nodeId, MutualTls tls) {
        return keep(Channels.builder(nodes.get(nodeId).agent(), tls, "127.0.0.1").build());
    }

    private ManagedChannel keep(ManagedChannel channel) {
        channels.add(channel);
        return channel;
    }

    /** Stops a node agent as a crash would look from the controller: its endpoint goes away. */
    void stop(String nodeId) throws InterruptedException {
        Node node = nodes.get(nodeId);
        node.server().shutdownNow();
        node.server().awaitTermination(Duration.ofSeconds(10));
        node.driver().close();
    }

    @Override
    public void close() throws Exception {
        channels.forEach(ManagedChannel::shutdownNow);
        controllerServer.shutdownNow();
        controllerServer.awaitTermination(Duration.ofSeconds(10));
        controller.close();
        for (Node node : nodes.values()) {
            if (!node.server().isTerminated()) {
                node.server().shutdownNow();
                node.server().awaitTermination(Duration.ofSeconds(10));
                node.driver().close();
            }
            Path pool = node.dataDir().resolve("pool");
            if (io.csi4j.driver.os.MountTable.read().isMountPoint(pool)) io.csi4j.driver.os.Mounts.unmount(pool);
        }
    }
}
