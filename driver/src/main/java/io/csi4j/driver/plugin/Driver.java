package io.csi4j.driver.plugin;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.Version;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.catalog.CatalogMissingException;
import io.csi4j.driver.cluster.AgentStatus;
import io.csi4j.driver.cluster.NodeAgentService;
import io.csi4j.driver.cluster.Peers;
import io.csi4j.driver.engine.PoolBacking;
import io.csi4j.driver.engine.StorageEngine;
import io.csi4j.driver.engine.open.Engines;
import io.csi4j.driver.group.VolumeGroups;
import io.csi4j.driver.mobility.Bandwidth;
import io.csi4j.driver.mobility.Copies;
import io.csi4j.driver.mobility.SourceSender;
import io.csi4j.driver.mobility.VolumeImports;
import io.csi4j.driver.node.NodeVolumes;
import io.csi4j.driver.replication.ReplicaState;
import io.csi4j.driver.replication.ReplicaStates;
import io.csi4j.driver.replication.RoundLog;
import io.csi4j.driver.replication.Rounds;
import io.csi4j.driver.os.Durable;
import io.csi4j.driver.reconcile.Reconciler;
import io.csi4j.driver.snapshot.GroupSnapshots;
import io.csi4j.driver.snapshot.SnapshotBlocks;
import io.csi4j.driver.snapshot.Snapshots;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.volume.Volumes;
import io.csi4j.sdk.paging.PageTokens;
import io.csi4j.sdk.server.MutualTls;
import io.grpc.BindableService;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The composition root of the local driver: opens the pool, the engine and the catalog, runs the
 * reconciler, and hands out the CSI services for the configured mode. Nothing here is global;
 * several drivers (on different data directories) can live in one JVM, as tests do.
 */
public final class Driver implements AutoCloseable {
    private final DriverConfig config;
    private final StorageEngine engine;
    private final Catalog catalog;
    private final Volumes volumes;
    /** The watch of a thin pool image's backing filesystem (empty for a directory pool). */
    private final Optional<PoolBacking> poolBacking;
    private final Snapshots snapshots;
    private final SnapshotBlocks snapshotBlocks;
    private final GroupSnapshots groupSnapshots;
    private final VolumeGroups volumeGroups;
    private final NodeVolumes node;
    private final ReplicaStates replicaStates;
    private final Reconciler reconciler;
    private final PageTokens tokens;
    private final AtomicBoolean ready = new AtomicBoolean();
    /** Copies between nodes this agent makes or serves (progress for status and metrics). */
    private final Copies copies = new Copies();
    /** The last round of each secondary on this agent (replication metrics); null until the agent serves. */
    private volatile RoundLog roundLog;
    private volatile Peers peers;
    private Reconciler.Report lastReport;

    private Driver(DriverConfig config, boolean removeOrphans) {
        this.config = config;
        try {
            io.csi4j.driver.os.Durable.createDirectories(config.dataDir());   // the catalog's directory survives a power cut
        } catch (UncheckedIOException e) {
            throw new UncheckedIOException("cannot create data directory " + config.dataDir(), e.getCause());
        }
        this.engine = Engines.open(config.engine(), config.layout(), config.poolSizeBytes(), config.overcommitRatio());
        requireCatalogIfPoolHoldsObjects(config.layout(), engine);
        this.catalog = Catalog.openIn(config.dataDir());
        InstantSource clock = InstantSource.system();
        this.poolBacking = PoolBacking.of(config.layout(), config.poolReserve());
        this.volumes = new Volumes(catalog, engine, poolBacking, config, clock);
        this.replicaStates = new ReplicaStates(config.dataDir().resolve(ReplicaStates.DIRECTORY));
        this.snapshots = new Snapshots(catalog, engine, volumes, config, clock, replicaStates::checkSnapshotSource);
        this.snapshotBlocks = new SnapshotBlocks(snapshots, engine);
        this.groupSnapshots = new GroupSnapshots(catalog, engine, volumes, config, clock, replicaStates::checkSnapshotSource);
        this.volumeGroups = new VolumeGroups(catalog, engine, volumes, config, clock);
        this.node = new NodeVolumes(catalog, engine, volumes, config, replicaStates);
        volumes.reads().notListed(id -> io.csi4j.driver.id.ReplicatedVolumeId.parse(id)
                .flatMap(replicaStates::get).map(s -> !s.writable()).orElse(false));
        volumes.reads().replicaCondition(this::failoverCondition);
        this.reconciler = new Reconciler(catalog, engine, volumes, snapshots, groupSnapshots);
        this.tokens = new PageTokens(pageTokenKey(config.layout()));
        this.lastReport = reconciler.run(removeOrphans);
        ready.set(true);
    }

    /** Opens everything and reconciles; the driver is ready when this returns. */
    public static Driver open(DriverConfig config) {
        return new Driver(config, false);
    }

    public static Driver open(DriverConfig config, boolean removeOrphans) {
        return new Driver(config, removeOrphans);
    }

    /** The CSI services this process serves in its mode (the table is {@link Services}). */
    public List<BindableService> csiServices() {
        return Services.served(this, Services.Socket.CSI);
    }

    /**
     * The CSI-Addons services, served on their own socket: identity always, volumegroup.Controller when this
     * process serves the controller; with the image engine also reclaimspace.ReclaimSpaceController (controller)
     * and reclaimspace.ReclaimSpaceNode (node).
     */
    public List<BindableService> addonsServices() {
        return Services.served(this, Services.Socket.ADDONS);
    }

    /**
     * What a node agent serves to the cluster's controller on its agent endpoint (TCP, mutual TLS): this node's
     * Controller, GroupController and CSI-Addons volume groups for its own pool, whatever the mode, plus both
     * identities (GetPluginInfo's manifest names the node, which is how the controller learns who answers), and
     * csi4j's NodeAgent. It copies volumes from other agents as {@code tls} (null: it cannot pull), within {@code bandwidth}.
     */
    public List<BindableService> agentServices(MutualTls tls, Bandwidth bandwidth) {
        if (tls != null && peers == null) peers = new Peers(tls);
        var sender = new SourceSender(catalog, engine, volumes, bandwidth, copies);
        var imports = new VolumeImports(volumes, engine, bandwidth, copies, config.nodeId());
        // storage speaks storage: the agent's services map StorageException to a status as the local ones do
        // the controller's heartbeats tell the agent it was not away (a gap unconfirms its primaries)
        var services = new ArrayList<>(io.csi4j.driver.cluster.ProbeHeard.wrap(Services.onAgent(this),
                replicaStates.confirmations()::heard));
        var rounds = new Rounds(replicaStates, volumes, snapshots, imports, engine, config.nodeId(), roundLog());
        // on an agent a primary also reports a secondary left behind (its points stopped), after its failover note
        volumes.reads().replicaCondition(id -> failoverCondition(id).or(() -> rounds.lagCondition(id)));
        rounds.enforceFences();                 // before it serves: a fenced copy's mounts are read-only again
        rounds.replayJournals();   // before any round and finishCutShort: a round applied in place that a crash cut short
        rounds.finishCutShort();   // before any round: what a crash left between a round's replica and its point
        services.add(AgentStatus.wrap(new NodeAgentService(engine, volumes, groupSnapshots, sender, imports, copies,
                peers == null ? new Peers(null) : peers, replicaStates, rounds, snapshots)));
        return services;
    }

    public Map<String, String> manifest() {
        var manifest = new LinkedHashMap<String, String>();
        manifest.put("engine", engine.name());
        manifest.put("pool-filesystem", engine.pool().filesystem());
        manifest.put("reflink", engine.pool().reflink() ? "yes" : "no");
        manifest.put("node", config.nodeId());
        // the extra topology segments, so the cluster controller can spread replicas over them (it reads no NodeGetInfo)
        config.topology().forEach((key, value) -> manifest.put(DriverConfig.TOPOLOGY_MANIFEST_PREFIX + key, value));
        return manifest;
    }

    /** The one line printed at start-up. */
    public String describe(String endpoint) {
        var info = engine.pool();
        return "csi4j %s serving %s on %s: engine=%s pool=%s (%s) reflink=%s catalog=%s node=%s mode=%s".formatted(
                Version.current(), DriverConfig.PLUGIN_NAME, endpoint, engine.name(), info.path(), info.filesystem(),
                info.reflink() ? "yes" : "no (snapshots are full copies)", catalog.file(), config.nodeId(),
                config.mode().name().toLowerCase());
    }

    public List<String> notices() {
        List<String> notices = new ArrayList<>(engine.notices());
        poolBacking.ifPresent(b -> notices.add(b.describe()));
        return notices;
    }

    /** The pool image's backing space in the Prometheus text format; empty for a directory pool. */
    public String poolBackingMetrics() {
        return poolBacking.map(PoolBacking::prometheusText).orElse("");
    }

    /** Lag, last sync, bytes and duration of each secondary on this agent, Prometheus text; empty if none. */
    public String replicaMetrics() {
        var log = roundLog;
        return log == null ? "" : log.prometheusText(java.time.Instant.now());
    }

    private java.util.Optional<String> failoverCondition(String volumeId) {
        return io.csi4j.driver.id.ReplicatedVolumeId.parse(volumeId).flatMap(replicaStates::get).map(ReplicaState::failover)
                .filter(f -> !f.isEmpty());
    }

    private synchronized RoundLog roundLog() {
        if (roundLog == null) roundLog = new RoundLog(config.nodeId(), config.dataDir().resolve(ReplicaStates.DIRECTORY));
        return roundLog;
    }

    public Reconciler.Report reconcileReport() {
        return lastReport;
    }

    public boolean ready() {
        return ready.get();
    }

    public DriverConfig config() { return config; }
    public Catalog catalog() { return catalog; }
    public StorageEngine engine() { return engine; }
    public Volumes volumes() { return volumes; }
    public Snapshots snapshots() { return snapshots; }
    public SnapshotBlocks snapshotBlocks() { return snapshotBlocks; }
    public GroupSnapshots groupSnapshots() { return groupSnapshots; }
    public VolumeGroups volumeGroups() { return volumeGroups; }
    public NodeVolumes node() { return node; }
    public PageTokens pageTokens() { return tokens; }
    public Copies copies() { return copies; }

    /**
     * A missing (or empty: SQLite takes a 0-byte file for a new database) catalog is only normal for a
     * new data directory. If the pool holds objects, refuse: an fsck rebuilds the catalog from them.
     */
    private static void requireCatalogIfPoolHoldsObjects(DataDir dataDir, StorageEngine engine) {
        Path file = dataDir.catalog();
        try {
            if (Files.exists(file) && Files.size(file) > 0) return;
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + file, e);
        }
        int volumes = engine.volumeArtifacts().size();
        int snapshots = engine.snapshotArtifacts().size();
        if (volumes + snapshots > 0) {
            engine.close();
            throw new CatalogMissingException(file, volumes, snapshots);
        }
    }

    /** Page tokens stay valid across restarts: the key is kept (0600) in the data directory. */
    private static byte[] pageTokenKey(DataDir dataDir) {
        Path file = dataDir.pageTokenKey();
        try {
            if (Files.exists(file)) {
                byte[] key = Files.readAllBytes(file);
                if (key.length >= 16) return key;
            }
            byte[] key = new byte[32];
            new SecureRandom().nextBytes(key);
            Path tmp = file.resolveSibling(DataDir.PAGE_TOKEN_KEY + ".tmp");
            Files.deleteIfExists(tmp);
            Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.write(tmp, key, StandardOpenOption.WRITE);
            Durable.atomicRename(tmp, file);
            return key;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot keep the page token key in " + file, e);
        }
    }

    @Override
    public void close() {
        ready.set(false);
        if (peers != null) peers.close();
        try {
            try {
                volumes.deletion().flushTombstones();   // a clean stop leaves none; after a crash the reconciler sweeps them
            } catch (RuntimeException e) {
                // kept: the next start's reconciler removes what they name
            }
            catalog.close();
        } finally {
            engine.close();
        }
    }
}
