package io.csi4j.cli;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.DriverConfig.GroupDeletePolicy;
import io.csi4j.driver.DriverConfig.Mode;
import io.csi4j.driver.engine.NodePrerequisites;
import io.csi4j.driver.engine.PoolChoice;
import io.csi4j.driver.engine.PoolReserve;
import io.csi4j.driver.plugin.Driver;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.sdk.PluginLogging;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.PluginServer;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.Set;
import io.csi4j.proto.csi.IdentityGrpc;
import java.util.concurrent.Callable;
import java.util.logging.Level;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import io.csi4j.driver.mobility.Bandwidth;
import io.csi4j.sdk.interceptor.CallMetrics;
import io.csi4j.sdk.server.MutualTls;
import io.grpc.BindableService;
import java.nio.file.Files;
import java.util.Optional;
import picocli.CommandLine;

/** {@code csi4j serve}: the local storage plugin, one process per node. */
@Command(name = "serve", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Serve the local.csi4j.io CSI plugin (Identity, Controller, GroupController, Node).")
public final class ServeCommand implements Callable<Integer> {

    @Option(names = "--endpoint", paramLabel = "URL",
            description = "CSI endpoint: unix:///abs/path, unix://rel/path, a path, or tcp://host:port. "
                    + "Default: $CSI_ENDPOINT, else unix://<data-dir>/csi.sock")
    String endpoint;

    @Mixin
    PluginDataOptions data;

    @Option(names = "--pool-size", paramLabel = "auto|0|SIZE", defaultValue = "auto",
            description = "auto: when the data directory's filesystem cannot reflink, create (once) a thin XFS pool image "
                    + "there as large as its free space less --pool-reserve, and adopt it on later starts, so snapshots and "
                    + "clones are instant; SIZE (e.g. 20Gi): such an image of this size; 0: serve from the data directory's "
                    + "own filesystem (without reflink, snapshots are full copies). Default: ${DEFAULT-VALUE}")
    String poolSize;

    @Option(names = "--pool-reserve", paramLabel = "SIZE|N%", defaultValue = "10%",
            description = "What a thin pool image leaves free on the filesystem beneath it: auto makes the image that much "
                    + "smaller, capacity counts only what that filesystem can still hold beyond it, and when other writers "
                    + "take the rest, volumes are reported abnormal and new ones refused. A size (e.g. 5Gi) or a share of "
                    + "that filesystem; 10%% is the kubelet's default nodefs eviction threshold. Default: ${DEFAULT-VALUE}")
    String poolReserve;

    @Option(names = "--mode", paramLabel = "all|controller|node", defaultValue = "all",
            description = "Which services to serve. Default: ${DEFAULT-VALUE}")
    Mode mode;

    @Option(names = "--max-volumes-per-node", paramLabel = "N", defaultValue = "0",
            description = "Reported in NodeGetInfo and enforced by ControllerPublishVolume; 0 = no limit")
    int maxVolumesPerNode;

    @Option(names = "--default-volume-size", paramLabel = "SIZE", converter = ByteSize.class, defaultValue = "1Gi",
            description = "Size of a volume created without a capacity range. Default: ${DEFAULT-VALUE}")
    long defaultVolumeSize;

    @Option(names = "--overcommit-ratio", paramLabel = "R", defaultValue = "1.0",
            description = "How many times the pool's size thin volumes may promise. Default: ${DEFAULT-VALUE}")
    double overcommitRatio;

    @Option(names = "--csi-addons-endpoint", paramLabel = "URL",
            description = "CSI-Addons endpoint (identity, volumegroup), a second socket: same forms as --endpoint, "
                    + "or 'none' to serve no CSI-Addons. Default: unix://<data-dir>/csi-addons.sock")
    String addonsEndpoint;

    @Option(names = "--volume-group-delete", paramLabel = "delete-volumes|retain-volumes", defaultValue = "delete-volumes",
            description = "DeleteVolumeGroup deletes the member volumes (seed semantics) or refuses a non-empty group (ceph-csi). Default: ${DEFAULT-VALUE}")
    String groupDelete;

    @Option(names = "--max-volume-group-members", paramLabel = "N", defaultValue = "64",
            description = "Most volumes a volume group may hold (more: RESOURCE_EXHAUSTED). Default: ${DEFAULT-VALUE}")
    int maxGroupMembers;

    @Option(names = "--volumes-in-several-groups",
            description = "Let a volume be in more than one volume group (by default it is in at most one, "
                    + "LIMIT_VOLUME_TO_ONE_VOLUME_GROUP)")
    boolean severalGroups;

    @Option(names = "--metrics-address", paramLabel = "HOST:PORT",
            description = "Serve Prometheus metrics on http://HOST:PORT/metrics")
    String metricsAddress;

    @Option(names = "--socket-mode", paramLabel = "OCTAL", defaultValue = "0600",
            description = "Mode of the UNIX sockets, set before the first accept. Default: ${DEFAULT-VALUE}")
    String socketMode;

    @Option(names = "--remove-orphans", description = "At start-up, delete pool artifacts that no catalog row owns")
    boolean removeOrphans;

    @Option(names = "--log-level", paramLabel = "LEVEL", defaultValue = "info",
            description = "error, warn, info or debug (debug logs requests with secrets redacted). Default: ${DEFAULT-VALUE}")
    String logLevel;

    @Option(names = "--agent-endpoint", paramLabel = "tcp://HOST:PORT",
            description = "With --mode node: also serve this node's Controller, GroupController and CSI-Addons volume groups "
                    + "to the cluster controller here, with mutual TLS (--tls-cert, --tls-key, --tls-ca)")
    String agentEndpoint;

    @Option(names = {"--nodes", "--agents"}, paramLabel = "NAME:PORT|HOST:PORT,...",
            description = "With --mode controller: the node agents to route every call to: a DNS name and port (every address "
                    + "it resolves to is an agent, as a headless Service gives; resolved again periodically) or a list of "
                    + "host:port. --agents is the same flag. The controller keeps no state of its own")
    String agents;

    @Option(names = "--copy-bandwidth", paramLabel = "BYTES/S", defaultValue = "0",
            description = "With --agent-endpoint: at most this many bytes per second (suffix k, M, G) for copies of volumes "
                    + "between nodes through this agent, sent and received together; 0 is no limit. Default: ${DEFAULT-VALUE}")
    String copyBandwidth;

    @Option(names = "--topology", paramLabel = "KEY=VALUE",
            description = "An extra topology segment of this node (repeatable), e.g. topology.kubernetes.io/zone=zone-a: reported in "
                    + "NodeGetInfo besides topology.csi4j.io/node, and to the cluster controller, which spreads a replicated volume's "
                    + "replicas over the values of the StorageClass's csi4j.io/replica-spread-key")
    java.util.List<String> topology = new java.util.ArrayList<>();

    @Option(names = "--tls-cert", paramLabel = "PEM", description = "This process's certificate chain for the agent link")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "PEM", description = "Its private key (PKCS#8 PEM)")
    Path tlsKey;

    @Option(names = "--tls-ca", paramLabel = "PEM", description = "The CA the other side's certificate must chain to (client certificates are required)")
    Path tlsCa;

    @Option(names = "--page-token-key", paramLabel = "FILE",
            description = "With --nodes: a file of at least 16 bytes signing merged page tokens, shared by controller replicas. Default: a random key per process")
    Path pageTokenKey;

    @Option(names = "--failover-after", paramLabel = "DURATION", defaultValue = "2m", converter = io.csi4j.cli.call.DurationConverter.class,
            description = "With --nodes: how long a replicated volume's primary node must be silent before ControllerPublishVolume"
                    + " on a secondary's node promotes its latest complete point (docs/replication.md). Default: ${DEFAULT-VALUE}")
    java.time.Duration failoverAfter;

    @Option(names = "--aot-training", hidden = true,
            description = "Serve, run a short workload against ourselves, and stop: the launcher's training run for the AOT cache")
    boolean aotTraining;

    @Override
    public Integer call() throws Exception {
        PluginLogging.install(level(logLevel));
        poolReserve();   // a bad --pool-reserve is refused before anything is made
        topology();      // and a bad --topology
        // the controller is stateless: no pool, so the pool choice is not made for it
        if (agents != null) return new ClusterServe(this, config(OptionalLong.empty())).serveController();
        PoolChoice.Choice pool = poolChoice();
        if (!prerequisitesMet(pool)) return 1;
        DriverConfig config = config(pool.poolSize());
        var cluster = new ClusterServe(this, config);
        // checked before the driver opens: a wrong flag must not cost a reconcile
        Endpoint agent = cluster.agentEndpoint();
        var agentTls = agent == null ? null : cluster.tls();
        Endpoint csi = csiEndpoint(config);
        Endpoint addons = addonsEndpoint(config);
        if (addons != null && addons.uri().equals(csi.uri())) {
            throw new CommandLine.ParameterException(new CommandLine(this),
                    "--csi-addons-endpoint must differ from the CSI endpoint " + csi.uri());
        }
        try (Driver driver = Driver.open(config, removeOrphans)) {
            var builder = PluginServer.builder()
                    .listen(csi, driver.csiServices().toArray(BindableService[]::new))
                    .socketMode(Integer.parseInt(socketMode, 8));
            if (addons != null) builder.listen(addons, driver.addonsServices().toArray(BindableService[]::new));
            if (agent != null) {
                builder.listen(agent, agentTls, driver.agentServices(agentTls,
                        new Bandwidth(copyBandwidth())).toArray(BindableService[]::new));
                // the controller's heartbeat (every second) is answered on the event loop that reads it: even with every
                // carrier of the virtual threads held by long system calls, a live agent is never taken for a silent one
                builder.onTransportThread(Set.of(IdentityGrpc.getProbeMethod().getFullMethodName()));
            }
            if (metricsAddress != null) {
                var metrics = new CallMetrics();
                // how SnapshotMetadata found its ranges (shared extents, or data read on a pool without reflink)
                metrics.include(driver.snapshotBlocks()::prometheusText);
                // copies of volumes between nodes, in and out, and their progress
                metrics.include(driver.copies()::prometheusText);
                // a thin pool image: what the filesystem beneath can still hold, and whether the pool is overcommitted
                metrics.include(driver::poolBackingMetrics);
                // replicated volumes: lag, last sync, bytes and duration of each secondary's last round on this agent
                metrics.include(driver::replicaMetrics);
                builder.metrics(metrics).metricsAddress(metricsAddress);
            }
            PluginServer server = builder.build().start().stopOnSignals();
            driver.notices().forEach(n -> System.err.println("csi4j: " + n));
            var report = driver.reconcileReport();
            if (!report.rolledBack().isEmpty() || !report.finished().isEmpty() || !report.clean()) {
                System.err.println("csi4j: " + report.summary()
                        + (report.clean() ? "" : "; orphans: " + report.orphanVolumes() + " " + report.orphanSnapshots()));
            }
            // the describe line comes last: once it is out, every socket is being served
            System.out.println(driver.describe(csi.uri()) + (addons != null ? " addons=" + addons.uri() : "")
                    + (agent != null ? " agent=" + server.endpoints().get(addons != null ? 2 : 1).uri()
                            + " tls=" + MutualTls.engine() : "")
                    + " (" + pool.reason() + ")");
            System.out.flush();
            if (aotTraining) {
                AotTraining.exerciseFromAnotherProcess(csi, addons);
                server.shutdown();
            }
            server.awaitTermination();
        }
        return 0;
    }

    /**
     * The node prerequisites for this engine and pool (deploy/README.md): one line on stderr per missing thing; false
     * (and a line each) when one is indispensable, before anything is made.
     */
    private boolean prerequisitesMet(PoolChoice.Choice pool) {
        boolean image = pool instanceof PoolChoice.Image;
        boolean toMake = image && !Files.exists(new DataDir(data.dataDir.toAbsolutePath().normalize()).poolImage());
        var findings = NodePrerequisites.check(NodePrerequisites.Facts.read(), new NodePrerequisites.Needs(data.engine, image, toMake));
        findings.stream().filter(f -> !f.refuses()).forEach(f -> System.err.println("csi4j: node prerequisite: " + f.line()));
        var refusing = findings.stream().filter(NodePrerequisites.Finding::refuses).toList();
        refusing.forEach(f -> System.err.println("csi4j: not serving: --engine " + data.engine.name().toLowerCase()
                + (image ? " with its XFS pool image" : "") + " cannot work here: " + f.line()));
        return refusing.isEmpty();
    }

    /** --endpoint, else $CSI_ENDPOINT, else the data directory's csi.sock. */
    Endpoint csiEndpoint(DriverConfig config) {
        String fromEnv = System.getenv("CSI_ENDPOINT");
        return endpoint != null || (fromEnv != null && !fromEnv.isBlank())
                ? Endpoint.resolve(Optional.ofNullable(endpoint), System.getenv())
                : Endpoint.parse(config.layout().csiEndpoint());
    }

    /** The CSI-Addons endpoint, or null for 'none'. */
    Endpoint addonsEndpoint(DriverConfig config) {
        if (addonsEndpoint == null || addonsEndpoint.isBlank()) {
            return Endpoint.parse(config.layout().addonsEndpoint());
        }
        return addonsEndpoint.equals("none") ? null : Endpoint.parse(addonsEndpoint);
    }

    /** What --pool-size says, with "auto" decided from the data directory (see {@link PoolChoice#decide}). */
    PoolChoice.Choice poolChoice() {
        String value = poolSize == null ? "auto" : poolSize.trim();
        DataDir layout = new DataDir(data.dataDir.toAbsolutePath().normalize());
        if (value.equalsIgnoreCase("auto")) return PoolChoice.decide(PoolChoice.Facts.of(layout), poolReserve());
        long bytes;
        try {
            bytes = ByteSize.parse(value);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this),
                    "--pool-size must be auto, 0 or a size such as 20Gi, not '" + value + "'");
        }
        Path image = layout.poolImage();
        if (bytes == 0 && Files.exists(image)) {
            // its pool image may be unmounted (after a reboot): the bare directory beneath would hide every volume
            throw new CommandLine.ParameterException(new CommandLine(this), "--pool-size 0, but "
                    + image + " holds this data directory's pool: start with --pool-size auto");
        }
        return bytes == 0 ? new PoolChoice.Directory("--pool-size 0: the data directory is the pool")
                : new PoolChoice.Image(bytes, "--pool-size " + value + ": an XFS pool image of that size");
    }

    DriverConfig config(OptionalLong poolBytes) {
        GroupDeletePolicy policy = switch (groupDelete) {
            case "delete-volumes" -> GroupDeletePolicy.DELETE_VOLUMES;
            case "retain-volumes" -> GroupDeletePolicy.RETAIN_VOLUMES;
            default -> throw new CommandLine.ParameterException(new CommandLine(this),
                    "--volume-group-delete must be delete-volumes or retain-volumes, not '" + groupDelete + "'");
        };
        return new DriverConfig(data.dataDir, data.nodeIdOrHostName(), data.engine, poolBytes,
                mode, maxVolumesPerNode, defaultVolumeSize, overcommitRatio, policy, !severalGroups, maxGroupMembers,
                poolReserve(), topology());
    }

    /** --topology KEY=VALUE, each key once; the values are checked by {@link DriverConfig}. */
    java.util.Map<String, String> topology() {
        var segments = new java.util.TreeMap<String, String>();
        for (String pair : topology) {
            int eq = pair.indexOf('=');
            if (eq <= 0 || segments.put(pair.substring(0, eq), pair.substring(eq + 1)) != null) {
                throw new CommandLine.ParameterException(new CommandLine(this), "--topology must be KEY=VALUE, each key once, not '" + pair + "'");
            }
        }
        try {
            DriverConfig.checkTopology(segments);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--topology: " + e.getMessage());
        }
        return segments;
    }

    /** --pool-reserve: N% of the backing filesystem, or a size. */
    PoolReserve poolReserve() {
        String value = poolReserve == null ? "10%" : poolReserve.trim();
        try {
            if (value.endsWith("%")) return PoolReserve.percent(Integer.parseInt(value.substring(0, value.length() - 1).trim()));
            return PoolReserve.bytes(ByteSize.parse(value));
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this),
                    "--pool-reserve must be a size such as 5Gi or a share such as 10%, not '" + value + "'"
                            + (e instanceof NumberFormatException ? "" : " (" + e.getMessage() + ")"));
        }
    }

    private static Level level(String name) {
        return switch (name.toLowerCase()) {
            case "error" -> Level.SEVERE;
            case "warn", "warning" -> Level.WARNING;
            case "info" -> Level.INFO;
            case "debug" -> Level.FINE;
            case "trace" -> Level.FINEST;
            default -> throw new IllegalArgumentException("unknown log level " + name);
        };
    }

    private long copyBandwidth() {
        try {
            return Bandwidth.parse(copyBandwidth);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--copy-bandwidth: " + e.getMessage());
        }
    }
}
