package io.csi4j.driver.cluster;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.Version;
import io.csi4j.sdk.server.MutualTls;
import io.csi4j.sdk.server.PluginServer;
import io.netty.channel.EventLoopGroup;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The composition root of {@code csi4j serve --mode controller}: a stateless router in front of the node
 * agents. It holds no catalog and no pool; what it knows is which agent serves which node. Its routers are
 * registered with the services they route, in the driver's {@code Services} table.
 */
public final class ClusterController implements AutoCloseable {
    /** How the controller reaches its agents. {@code pageTokenKey} null: a random key (tokens die with the process). */
    public record Config(List<Agents.Entry> agents, MutualTls tls, byte[] pageTokenKey, Duration callTimeout,
                         Duration refreshEvery, DriverConfig addonsSemantics, Duration failoverAfter) {
        public Config(List<Agents.Entry> agents, MutualTls tls, byte[] pageTokenKey, Duration callTimeout,
                      Duration refreshEvery, DriverConfig addonsSemantics) {
            this(agents, tls, pageTokenKey, callTimeout, refreshEvery, addonsSemantics, Replicas.FAILOVER_AFTER);
        }

        public Config {
            if (failoverAfter.isNegative() || failoverAfter.isZero()) throw new IllegalArgumentException("--failover-after must be positive");
            agents = List.copyOf(agents);
            if (agents.isEmpty()) throw new IllegalArgumentException("a controller needs at least one agent (--nodes)");
        }
    }

    private final Config config;
    private final Agents agents;
    private final ClusterPageToken tokens;
    private final ReplicationScheduler replication;
    /** The server's event loops, shared with the agents' per-loop channels ({@link LoopChannels}); closed after the agents. */
    private final EventLoopGroup eventLoops = PluginServer.eventLoops();

    public ClusterController(Config config) {
        this.config = config;
        this.agents = new Agents(config.agents(), config.tls(), config.callTimeout(), config.refreshEvery());
        this.tokens = config.pageTokenKey() == null ? ClusterPageToken.withRandomKey() : new ClusterPageToken(config.pageTokenKey());
        this.replication = new ReplicationScheduler(agents, config.failoverAfter());
    }

    /** The event loops the controller's server must run on ({@code PluginServer.Builder.eventLoops}). */
    public EventLoopGroup eventLoops() {
        return eventLoops;
    }

    public Agents agents() {
        return agents;
    }

    /** How long a replicated volume's primary node must be silent before ControllerPublishVolume fails it over. */
    public Duration failoverAfter() {
        return config.failoverAfter();
    }

    /** Signs the page tokens of the listings the controller merges. */
    public ClusterPageToken pageTokens() {
        return tokens;
    }

    /** The configuration whose CSI-Addons semantics (volume group policies) the controller advertises. */
    public DriverConfig addonsSemantics() {
        return config.addonsSemantics();
    }

    /** What GetPluginInfo (and the CSI-Addons GetIdentity) say of the controller: its role and agents. */
    public Map<String, String> manifest() {
        var manifest = new LinkedHashMap<String, String>();
        manifest.put("role", "controller");
        manifest.put("agents", String.join(",", config.agents().stream().map(e -> e.host() + ":" + e.port()).toList()));
        return manifest;
    }

    /** The one line printed at start-up. */
    public String describe(String endpoint) {
        return "csi4j %s cluster controller serving %s on %s: agents=%s nodes=%s%s".formatted(Version.current(),
                DriverConfig.PLUGIN_NAME, endpoint, manifest().get("agents"),
                agents.nodes().stream().map(Agent::nodeId).toList(),
                agents.unidentified().isEmpty() ? "" : " not answering=" + agents.unidentified().stream().map(Agent::address).toList());
    }

    @Override
    public void close() {
        replication.close();
        agents.close();
        eventLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
