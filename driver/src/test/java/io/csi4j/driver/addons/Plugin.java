package io.csi4j.driver.addons;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.DriverConfig.GroupDeletePolicy;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.plugin.Driver;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.addons.volumegroup.ControllerGrpc;
import io.csi4j.proto.csi.ControllerGetVolumeRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.GroupControllerGrpc;
import io.csi4j.proto.csi.IdentityGrpc;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.proto.csi.VolumeContentSource;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.PluginServer;
import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * A real csi4j plugin for end-to-end tests: a {@link Driver} on its own data directory served by
 * {@link PluginServer} (standard interceptors) on two UNIX sockets, the CSI one and the CSI-Addons one, with
 * blocking clients on both. {@link #restart()} stops everything and opens it again on the same data, so the
 * reconciler runs; {@link #close()} also releases the XFS pool image of the {@link Setup#IMAGE_XFS} setup.
 */
final class Plugin implements AutoCloseable {
    /** The engines the tests run on: image files on a private XFS pool (reflink, needs root), and directories. */
    enum Setup {
        IMAGE_XFS(EngineKind.IMAGE, OptionalLong.of(1L << 30)),
        IMAGE_PLAIN(EngineKind.IMAGE, OptionalLong.empty()),
        DIR(EngineKind.DIR, OptionalLong.empty());

        final EngineKind engine;
        final OptionalLong poolSize;

        Setup(EngineKind engine, OptionalLong poolSize) {
            this.engine = engine;
            this.poolSize = poolSize;
        }

        void requireMachine() {
            if (poolSize.isPresent()) {
                Privileged.requireRoot();
                Privileged.require(Files.isExecutable(Path.of("/usr/sbin/mkfs.xfs")) || Files.isExecutable(Path.of("/sbin/mkfs.xfs")),
                        "mkfs.xfs is not installed");
            }
        }
    }

    final DriverConfig config;
    final Path dataDir;
    private Driver driver;
    private PluginServer server;
    private ManagedChannel csiChannel;
    private ManagedChannel addonsChannel;

    private Plugin(DriverConfig config) {
        this.config = config;
        this.dataDir = config.dataDir();
    }

    static DriverConfig config(Path dataDir, String nodeId, Setup setup, GroupDeletePolicy policy, int maxMembers) {
        return config(dataDir, nodeId, setup, policy, maxMembers, true);
    }

    static DriverConfig config(Path dataDir, String nodeId, Setup setup, GroupDeletePolicy policy, int maxMembers,
                               boolean oneGroupPerVolume) {
        var d = DriverConfig.defaults(dataDir, nodeId);
        return new DriverConfig(d.dataDir(), nodeId, setup.engine, setup.poolSize, d.mode(), 0, 64L << 20,
                d.overcommitRatio(), policy, oneGroupPerVolume, maxMembers);
    }

    static Plugin start(DriverConfig config) {
        var plugin = new Plugin(config);
        try {
            plugin.open();
            return plugin;
        } catch (RuntimeException e) {
            plugin.close();
            throw e;
        }
    }

    private void open() {
        driver = Driver.open(config);
        Endpoint csi = Endpoint.parse("unix://" + dataDir.resolve("csi.sock"));
        Endpoint addons = Endpoint.parse("unix://" + dataDir.resolve("csi-addons.sock"));
        try {
            server = PluginServer.builder()
                    .listen(csi, driver.csiServices().toArray(BindableService[]::new))
                    .listen(addons, driver.addonsServices().toArray(BindableService[]::new))
                    .build().start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        csiChannel = Channels.connect(csi);
        addonsChannel = Channels.connect(addons);
    }

    /** Stops the server and the driver (as a plugin restart does) and opens both again on the same data. */
    void restart() {
        stop();
        open();
    }

    Driver driver() { return driver; }

    ControllerGrpc.ControllerBlockingStub groups() {
        return ControllerGrpc.newBlockingStub(addonsChannel).withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    io.csi4j.proto.addons.identity.IdentityGrpc.IdentityBlockingStub addonsIdentity() {
        return io.csi4j.proto.addons.identity.IdentityGrpc.newBlockingStub(addonsChannel).withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    io.csi4j.proto.csi.ControllerGrpc.ControllerBlockingStub controller() {
        return io.csi4j.proto.csi.ControllerGrpc.newBlockingStub(csiChannel).withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    GroupControllerGrpc.GroupControllerBlockingStub groupController() {
        return GroupControllerGrpc.newBlockingStub(csiChannel).withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    io.csi4j.proto.csi.NodeGrpc.NodeBlockingStub node() {
        return io.csi4j.proto.csi.NodeGrpc.newBlockingStub(csiChannel).withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    IdentityGrpc.IdentityBlockingStub identity() {
        return IdentityGrpc.newBlockingStub(csiChannel).withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    static final VolumeCapability WRITER = VolumeCapability.newBuilder()
            .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER))
            .setMount(VolumeCapability.MountVolume.newBuilder().setFsType("ext4"))
            .build();

    /** CreateVolume over the CSI socket. */
    Volume createVolume(String name) {
        return controller().createVolume(CreateVolumeRequest.newBuilder().setName(name).addVolumeCapabilities(WRITER).build())
                .getVolume();
    }

    Volume restoreVolume(String name, String snapshotId) {
        return controller().createVolume(CreateVolumeRequest.newBuilder().setName(name).addVolumeCapabilities(WRITER)
                .setVolumeContentSource(VolumeContentSource.newBuilder()
                        .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snapshotId)))
                .build()).getVolume();
    }

    /** ControllerGetVolume's view of a volume. */
    Volume getVolume(String volumeId) {
        return controller().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(volumeId).build()).getVolume();
    }

    private void stop() {
        try {
            if (csiChannel != null) csiChannel.shutdownNow();
            if (addonsChannel != null) addonsChannel.shutdownNow();
            if (server != null) server.shutdownNow();
            if (server != null) server.awaitTermination();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            csiChannel = null;
            addonsChannel = null;
            server = null;
            if (driver != null) driver.close();
            driver = null;
        }
    }

    @Override
    public void close() {
        try {
            stop();
        } finally {
            Pool.uninstall(new DataDir(dataDir));
        }
    }
}
