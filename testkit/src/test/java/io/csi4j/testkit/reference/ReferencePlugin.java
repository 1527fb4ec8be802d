package io.csi4j.testkit.reference;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A small, in-memory CSI plugin for testing the suite itself: correct for Identity, Controller
 * (volumes, snapshots, paging), Node (publish copies bytes to target_path, no root needed),
 * GroupController and the CSI-Addons services, unless built with {@link Flaw}s. Serves on real UNIX
 * sockets in a directory of its own (or, for the endpoint test, TCP on localhost).
 */
public final class ReferencePlugin implements AutoCloseable {
    private final Path dir;
    private final Store store;
    private final EventLoopGroup loop = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
    private volatile Server csi;
    private volatile Server addons;
    private final io.csi4j.sdk.server.PluginServer sdkServer;
    private final String endpoint;

    /** Serves the reference services through the sdk's PluginServer (its standard interceptor chain in front). */
    private ReferencePlugin(Path dir, Options options, Set<Flaw> flaws) throws IOException {
        this.dir = dir;
        this.store = new Store(Files.createDirectories(dir.resolve("pool")), options, flaws);
        ReferenceController controller = new ReferenceController(store);
        List<BindableService> services = new java.util.ArrayList<>(List.of(new ReferenceIdentity(store), controller, new ReferenceNode(store)));
        if (options.groupSnapshots()) services.add(new ReferenceGroupController(store, controller));
        if (options.snapshotMetadata()) services.add(new ReferenceSnapshotMetadata(store));
        Path socket = dir.resolve("csi.sock");
        var builder = io.csi4j.sdk.server.PluginServer.builder()
                .listen(new io.csi4j.sdk.server.Endpoint.Unix(socket), services.toArray(BindableService[]::new));
        if (options.addons()) {
            builder.listen(new io.csi4j.sdk.server.Endpoint.Unix(dir.resolve("csi-addons.sock")),
                    new ReferenceAddons.Identity(store), new ReferenceAddons.Groups(store));
        }
        this.sdkServer = builder.build().start();
        this.csi = null;
        this.addons = null;
        this.endpoint = "unix://" + socket.toAbsolutePath();
    }

    private ReferencePlugin(Path dir, Options options, Set<Flaw> flaws, boolean tcp) throws IOException {
        this(dir, options, flaws, tcp, null);
    }

    /**
     * {@code restartAfter}: when the plugin exits ({@link Flaw#EXITS_ON_NEGATIVE_MAX_ENTRIES}), a supervisor serves
     * it again on the same sockets after this delay, with the state it had; null: it stays down.
     */
    private ReferencePlugin(Path dir, Options options, Set<Flaw> flaws, boolean tcp, java.time.Duration restartAfter) throws IOException {
        this.sdkServer = null;
        this.dir = dir;
        Path pool = Files.createDirectories(dir.resolve("pool"));
        this.store = new Store(pool, options, flaws);
        ReferenceController controller = new ReferenceController(store);
        List<BindableService> services = new java.util.ArrayList<>(List.of(new ReferenceIdentity(store), controller, new ReferenceNode(store)));
        if (options.groupSnapshots()) services.add(new ReferenceGroupController(store, controller));
        if (options.snapshotMetadata()) services.add(new ReferenceSnapshotMetadata(store));
        if (tcp) {
            csi = serve(new InetSocketAddress("127.0.0.1", 0), services, true);
            endpoint = "tcp://127.0.0.1:" + ((InetSocketAddress) csi.getListenSockets().getFirst()).getPort();
        } else {
            Path socket = dir.resolve("csi.sock");
            csi = serve(UnixDomainSocketAddress.of(socket), services, false);
            endpoint = "unix://" + socket.toAbsolutePath();
        }
        List<BindableService> addonsServices = List.of(new ReferenceAddons.Identity(store), new ReferenceAddons.Groups(store));
        addons = options.addons() ? serve(UnixDomainSocketAddress.of(dir.resolve("csi-addons.sock")), addonsServices, false) : null;
        store.exit = () -> {
            // shutdownNow from inside a call: every connection is closed, the call in flight never answered
            csi.shutdownNow();
            if (addons != null) addons.shutdownNow();
            if (restartAfter == null || tcp) return;
            Thread.ofVirtual().start(() -> {
                try {
                    Thread.sleep(restartAfter);
                    csi.awaitTermination(5, TimeUnit.SECONDS);
                    Files.deleteIfExists(dir.resolve("csi.sock"));
                    Files.deleteIfExists(dir.resolve("csi-addons.sock"));
                    csi = serve(UnixDomainSocketAddress.of(dir.resolve("csi.sock")), services, false);
                    if (options.addons()) addons = serve(UnixDomainSocketAddress.of(dir.resolve("csi-addons.sock")), addonsServices, false);
                } catch (IOException | InterruptedException e) {
                    throw new IllegalStateException("the supervisor could not restart the plugin", e);
                }
            });
        };
    }

    public static ReferencePlugin start(Path dir, Options options, Set<Flaw> flaws) throws IOException {
        return new ReferencePlugin(dir, options, flaws, false);
    }

    /** A plugin under a supervisor: when it exits, it is served again after {@code restartAfter}, with its state. */
    public static ReferencePlugin startSupervised(Path dir, Options options, Set<Flaw> flaws, java.time.Duration restartAfter) throws IOException {
        return new ReferencePlugin(dir, options, flaws, false, restartAfter);
    }

    public static ReferencePlugin startOnSdk(Path dir, Options options, Set<Flaw> flaws) throws IOException {
        return new ReferencePlugin(dir, options, flaws);
    }

    public static ReferencePlugin startTcp(Path dir, Options options) throws IOException {
        return new ReferencePlugin(dir, options, Set.of(), true);
    }

    private Server serve(SocketAddress address, List<BindableService> services, boolean tcp) throws IOException {
        NettyServerBuilder builder = NettyServerBuilder.forAddress(address)
                .channelType(tcp ? NioServerSocketChannel.class : NioServerDomainSocketChannel.class)
                .bossEventLoopGroup(loop)
                .workerEventLoopGroup(loop);
        if (!tcp) builder.withChildOption(ChannelOption.SO_KEEPALIVE, null);
        services.forEach(builder::addService);
        return builder.build().start();
    }

    /** Makes {@link Flaw#EXITS_ON_NEGATIVE_MAX_ENTRIES} end the whole process at once (for a plugin run as a child process). */
    void exitProcessOnCrash() {
        store.exit = () -> Runtime.getRuntime().halt(70);
    }

    /** The CSI endpoint: {@code unix:///...} (or {@code tcp://127.0.0.1:port}). */
    public String endpoint() {
        return endpoint;
    }

    public Optional<String> addonsEndpoint() {
        return !store.options.addons() ? Optional.empty() : Optional.of("unix://" + dir.resolve("csi-addons.sock").toAbsolutePath());
    }

    /** What is left in the plugin: a suite that cleans up leaves nothing. */
    public synchronized String leftovers() {
        synchronized (store) {
            StringBuilder b = new StringBuilder();
            if (!store.volumes.isEmpty()) b.append(store.volumes.size()).append(" volumes ").append(store.volumes.keySet()).append(' ');
            if (!store.snapshots.isEmpty()) b.append(store.snapshots.size()).append(" snapshots ").append(store.snapshots.keySet()).append(' ');
            if (!store.groupSnapshots.isEmpty()) b.append(store.groupSnapshots.size()).append(" group snapshots ");
            if (!store.volumeGroups.isEmpty()) b.append(store.volumeGroups.size()).append(" volume groups ");
            long published = store.volumes.values().stream().filter(Store.VolumeRecord::inUse).count();
            if (published > 0) b.append(published).append(" volumes in use ");
            return b.toString().strip();
        }
    }

    @Override
    public void close() {
        if (sdkServer != null) sdkServer.close();
        if (csi != null) csi.shutdownNow();
        if (addons != null) addons.shutdownNow();
        try {
            if (csi != null) csi.awaitTermination(5, TimeUnit.SECONDS);
            if (addons != null) addons.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        synchronized (store) {
            // whatever a failed run left published: release read-only mounts before anything is deleted
            for (Store.VolumeRecord v : store.volumes.values()) {
                for (Store.Publication p : v.published.values()) {
                    if (p.readonly()) ReadOnly.release(p.target(), p.mounted());
                }
                v.published.clear();
            }
        }
        Data.delete(store.pool);
        try {
            Files.deleteIfExists(dir.resolve("csi.sock"));
            Files.deleteIfExists(dir.resolve("csi-addons.sock"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
