package io.csi4j.driver.csi;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.model.Page;
import io.csi4j.driver.model.SnapshotFilter;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.plugin.Driver;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.GroupControllerGrpc;
import io.csi4j.proto.csi.IdentityGrpc;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.PluginServer;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The driver served on a real UNIX socket from a temp directory, with blocking clients for every
 * service: what a CO would talk to. {@link #restart()} stops the plugin the way a pod restart does
 * (mounts and loop devices stay) and starts a new one on the same data directory. {@link #close()}
 * releases everything, the pool image mount too.
 */
final class ServedDriver implements AutoCloseable {
    static final String NODE_ID = "node-a";

    final Path root;
    final DriverConfig config;
    private final Path socket;
    private Driver driver;
    private PluginServer server;
    private ManagedChannel channel;
    private ManagedChannel addonsChannel;
    IdentityGrpc.IdentityBlockingStub identity;
    ControllerGrpc.ControllerBlockingStub controller;
    GroupControllerGrpc.GroupControllerBlockingStub groupController;
    NodeGrpc.NodeBlockingStub node;

    private ServedDriver(Path root, DriverConfig config) {
        this.root = root;
        this.config = config;
        this.socket = root.resolve("csi.sock");
    }

    /** The image engine on its own XFS pool image (reflinks) of {@code poolSize} bytes. */
    static ServedDriver imagePool(long poolSize) {
        Path root = tempRoot();
        DriverConfig d = DriverConfig.defaults(root.resolve("data"), NODE_ID);
        return start(root, new DriverConfig(d.dataDir(), d.nodeId(), d.engine(), OptionalLong.of(poolSize), d.mode(),
                d.maxVolumesPerNode(), d.defaultVolumeBytes(), d.overcommitRatio(), d.groupDeletePolicy(),
                d.oneGroupPerVolume(), d.maxGroupMembers()));
    }

    /** A plain-directory pool in {@code dataDir} (which may sit on a scratch filesystem). */
    static ServedDriver plainPool(Path dataDir, EngineKind engine) {
        return start(tempRoot(), DriverConfig.defaults(dataDir, NODE_ID).withEngine(engine));
    }

    private static Path tempRoot() {
        try {
            Path root = Files.createTempDirectory("csi4j-served-").toRealPath();
            // staging and target paths live here; a non-root user in a mount group must reach them
            Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxr-xr-x"));
            return root;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static ServedDriver start(Path root, DriverConfig config) {
        var served = new ServedDriver(root, config);
        try {
            served.startPlugin();
            return served;
        } catch (RuntimeException | Error e) {
            try {
                served.close();
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    private void startPlugin() {
        driver = Driver.open(config);
        try {
            server = PluginServer.builder().listen(Endpoint.parse("unix://" + socket),
                    driver.csiServices().toArray(io.grpc.BindableService[]::new))
                    .listen(Endpoint.parse("unix://" + addonsSocket()), driver.addonsServices().toArray(io.grpc.BindableService[]::new))
                    .build().start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        channel = Channels.connect(Endpoint.parse("unix://" + socket));
        addonsChannel = Channels.connect(Endpoint.parse("unix://" + addonsSocket()));
        identity = IdentityGrpc.newBlockingStub(channel).withDeadlineAfter(2, TimeUnit.MINUTES);
        controller = ControllerGrpc.newBlockingStub(channel).withDeadlineAfter(2, TimeUnit.MINUTES);
        groupController = GroupControllerGrpc.newBlockingStub(channel).withDeadlineAfter(2, TimeUnit.MINUTES);
        node = NodeGrpc.newBlockingStub(channel).withDeadlineAfter(2, TimeUnit.MINUTES);
    }

    /** Stops the plugin (server, channel, driver); mounts and loop devices stay, as when its pod stops. */
    void stop() {
        if (channel != null) {
            channel.shutdownNow();
            channel = null;
        }
        if (addonsChannel != null) {
            addonsChannel.shutdownNow();
            addonsChannel = null;
        }
        if (server != null) {
            server.shutdownNow();
            server.close();
            server = null;
        }
        if (driver != null) {
            driver.close();
            driver = null;
        }
    }

    void restart() {
        stop();
        startPlugin();
    }

    Driver driver() { return driver; }

    /** The client channel to the plugin's socket, for stubs a test builds itself (streams, cancellation). */
    ManagedChannel channel() { return channel; }

    /** The client channel to the plugin's CSI-Addons socket (beside the CSI one). */
    ManagedChannel addonsChannel() { return addonsChannel; }

    Path addonsSocket() { return root.resolve("csi-addons.sock"); }

    Path socket() { return socket; }

    /** {@code <pool>/volumes}: every loop device of a volume is backed by a file here. */
    Path volumesDir() {
        return driver.engine().pool().path().resolve("volumes");
    }

    Path image(String volumeId) {
        return volumesDir().resolve(volumeId + ".img");
    }

    /** A fresh directory for one test's staging and target paths, watched by {@link LeakCheck}. */
    Path nodeDir(String name) {
        try {
            Path dir = Files.createDirectories(root.resolve("node").resolve(name));
            Files.setPosixFilePermissions(root.resolve("node"), PosixFilePermissions.fromString("rwxr-xr-x"));
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
            LeakCheck.watch(dir);
            LeakCheck.watch(volumesDir());
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * After a test: reports (and releases) mounts and loop devices it left, then deletes every
     * volume and snapshot through the domain so the next test starts from an empty pool.
     */
    List<String> cleanUp(Path nodeDir) {
        List<String> leaks = new ArrayList<>(LeakCheck.leaksUnder(Set.of(nodeDir, volumesDir())));
        var volumes = driver.volumes();
        for (var g : driver.catalog().groupSnapshots().inState(io.csi4j.driver.model.State.READY)) {
            driver.groupSnapshots().delete(g.id(), List.of());
        }
        Page<SnapshotRecord> snapshots = driver.snapshots().list(0, 1000, new SnapshotFilter(null, null));
        snapshots.items().forEach(s -> driver.snapshots().delete(s.id()));
        Page<VolumeRecord> page = volumes.reads().list(0, 1000);
        for (VolumeRecord v : page.items()) {
            volumes.publications().unpublish(v.id(), "");
            volumes.deletion().delete(v.id());
        }
        deleteTree(nodeDir);
        return leaks;
    }

    @Override
    public void close() {
        RuntimeException failure = null;
        try {
            stop();
        } catch (RuntimeException e) {
            failure = e;
        }
        try {
            LeakCheck.release(Set.of(root.resolve("node")));
            Pool.uninstall(config.layout());
            if (!MountTable.read().under(root).isEmpty()) throw new IllegalStateException("mounts left under " + root);
            deleteTree(root);
        } catch (RuntimeException e) {
            if (failure == null) failure = e; else failure.addSuppressed(e);
        }
        if (failure != null) throw failure;
    }

    static void deleteTree(Path dir) {
        if (!Files.exists(dir)) return;
        if (!MountTable.read().under(dir).isEmpty()) throw new IllegalStateException(dir + " still has mounts");
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (IOException e) {
            throw new UncheckedIOException("deleting " + dir, e);
        }
    }
}
