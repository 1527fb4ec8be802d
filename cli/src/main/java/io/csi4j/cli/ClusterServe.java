package io.csi4j.cli;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.DriverConfig.Mode;
import io.csi4j.driver.plugin.Services;
import io.csi4j.driver.cluster.Agents;
import io.csi4j.driver.cluster.ClusterController;
import io.csi4j.sdk.interceptor.CallMetrics;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.MutualTls;
import io.csi4j.sdk.server.PluginServer;
import java.nio.file.Files;
import java.time.Duration;
import picocli.CommandLine;
import io.grpc.BindableService;
import java.util.List;

/** The cluster shapes of {@code csi4j serve}: the node agent's TLS endpoint, and the stateless controller. */
final class ClusterServe {
    private final ServeCommand flags;
    private final DriverConfig config;

    ClusterServe(ServeCommand flags, DriverConfig config) {
        this.flags = flags;
        this.config = config;
    }

    /** The agent endpoint of a node agent, or null when not asked for. */
    Endpoint agentEndpoint() {
        if (flags.agentEndpoint == null) return null;
        if (flags.mode != Mode.NODE) throw usage("--agent-endpoint is for --mode node");
        Endpoint endpoint = Endpoint.parse(flags.agentEndpoint);
        if (!(endpoint instanceof Endpoint.Tcp)) throw usage("--agent-endpoint must be tcp://HOST:PORT, not " + flags.agentEndpoint);
        return endpoint;
    }

    MutualTls tls() {
        if (flags.tlsCert == null || flags.tlsKey == null || flags.tlsCa == null) {
            throw usage("the agent link needs mutual TLS: --tls-cert, --tls-key and --tls-ca");
        }
        try {
            return new MutualTls(flags.tlsCert, flags.tlsKey, flags.tlsCa);
        } catch (IllegalArgumentException e) {
            throw usage(e.getMessage());
        }
    }

    /** {@code --mode controller --nodes ...}: serve the routers until stopped. */
    int serveController() throws Exception {
        if (flags.mode != Mode.CONTROLLER) throw usage("--nodes (--agents) is for --mode controller");
        var entries = parseAgents();
        Files.createDirectories(config.dataDir());  // only for the default socket paths
        byte[] key = flags.pageTokenKey == null ? null : Files.readAllBytes(flags.pageTokenKey);
        if (key != null && key.length < 16) throw usage("--page-token-key " + flags.pageTokenKey + " must hold at least 16 bytes");
        Endpoint csi = flags.csiEndpoint(config);
        Endpoint addons = flags.addonsEndpoint(config);
        if (flags.failoverAfter.isNegative() || flags.failoverAfter.isZero()) throw usage("--failover-after must be positive");
        var cluster = new ClusterController(new ClusterController.Config(entries, tls(), key, Duration.ofMinutes(2),
                Duration.ofSeconds(30), config, flags.failoverAfter));
        try (cluster) {
            var builder = PluginServer.builder()
                    .listen(csi, Services.cluster(cluster, Services.Socket.CSI).toArray(BindableService[]::new))
                    .socketMode(Integer.parseInt(flags.socketMode, 8))
                    .onTransportThread(Services.onTransportThread())
                    .eventLoops(cluster.eventLoops());
            if (addons != null) builder.listen(addons, Services.cluster(cluster, Services.Socket.ADDONS).toArray(BindableService[]::new));
            if (flags.metricsAddress != null) {
                var metrics = new CallMetrics();
                metrics.include(cluster.agents()::prometheusText);  // how long each node has said nothing
                builder.metrics(metrics).metricsAddress(flags.metricsAddress);
            }
            PluginServer server = builder.build().start().stopOnSignals();
            System.out.println(cluster.describe(csi.uri()) + (addons != null ? " addons=" + addons.uri() : "")
                    + " tls=" + MutualTls.engine());
            System.out.flush();
            server.awaitTermination();
        }
        return 0;
    }

    private List<Agents.Entry> parseAgents() {
        try {
            return Agents.Entry.parseList(flags.agents);
        } catch (IllegalArgumentException e) {
            throw usage("--nodes: " + e.getMessage());
        }
    }

    private CommandLine.ParameterException usage(String message) {
        return new CommandLine.ParameterException(new CommandLine(flags), message);
    }

}
