package io.csi4j.sdk.server;

import io.csi4j.sdk.interceptor.CallMetrics;
import io.csi4j.sdk.interceptor.InFlightGuard;
import io.csi4j.sdk.interceptor.Interceptors;
import io.csi4j.sdk.interceptor.MetricsEndpoint;
import io.csi4j.sdk.interceptor.ValidationInterceptor;
import io.grpc.BindableService;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallExecutorSupplier;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;
import io.csi4j.sdk.interceptor.MalformedRequests;
import java.net.InetAddress;

/**
 * Serves gRPC services of a CSI plugin on one or more endpoints (typically the CSI socket and the
 * CSI-Addons socket) from one process, with the standard interceptors, on virtual threads.
 *
 * <pre>{@code
 * PluginServer server = PluginServer.builder()
 *     .listen(Endpoint.resolve(flag, System.getenv()), identity, controller, node)
 *     .listen(Endpoint.parse("unix:///csi/csi-addons.sock"), addonsIdentity, volumeGroups)
 *     .metricsAddress(":9808")
 *     .build()
 *     .start();
 * server.stopOnSignals();       // SIGTERM/SIGINT: drain, remove sockets
 * server.awaitTermination();    // returns after shutdown; main then returns and the JVM exits 0
 * }</pre>
 */
public final class PluginServer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(PluginServer.class.getName());

    private final List<Listener> listeners;
    private final List<ServerInterceptor> interceptors;
    private final Set<PosixFilePermission> socketMode;
    private final Duration shutdownGrace;
    private final CallMetrics metrics;
    private final InetSocketAddress metricsAddress;
    private final Set<String> onTransportThread;
    /** Event loops the caller owns (not shut down with the server), or null for the server's own. */
    private final EventLoopGroup givenWorkers;

    private final CountDownLatch terminated = new CountDownLatch(1);
    private final AtomicInteger state = new AtomicInteger(NEW);
    private static final int NEW = 0, RUNNING = 1, STOPPING = 2, STOPPED = 3;

    private final List<Running> running = new ArrayList<>();
    private EventLoopGroup boss;
    private EventLoopGroup workers;
    private ExecutorService executor;
    private MetricsEndpoint metricsEndpoint;
    private volatile boolean forceStop;

    /** {@code tls} is null for plaintext (what CSI prescribes on its UNIX socket). */
    private record Listener(Endpoint endpoint, List<ServerServiceDefinition> services, MutualTls tls) {}

    /** One started endpoint: the endpoint as bound (a TCP port 0 becomes the real port). */
    private record Running(Endpoint endpoint, Server server, SocketFile socketFile) {}

    private PluginServer(Builder b) {
        this.listeners = List.copyOf(b.listeners);
        this.socketMode = Set.copyOf(b.socketMode);
        this.shutdownGrace = b.shutdownGrace;
        this.metrics = b.metrics;
        this.metricsAddress = b.metricsAddress;
        this.onTransportThread = Set.copyOf(b.onTransportThread);
        this.givenWorkers = b.workers;
        this.interceptors = b.interceptors != null ? List.copyOf(b.interceptors)
                : Interceptors.standard().metrics(b.metrics).guard(b.guard).validation(b.validation).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Binds every endpoint; on any failure nothing stays bound and no socket file is left behind. */
    public PluginServer start() throws IOException {
        if (!state.compareAndSet(NEW, RUNNING)) throw new IllegalStateException("already started");
        boss = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("csi4j-accept"), NioIoHandler.newFactory());
        workers = givenWorkers != null ? givenWorkers : eventLoops();
        executor = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("csi4j-call-", 0).factory());
        try {
            for (Listener listener : listeners) running.add(bind(listener));
            if (metricsAddress != null) metricsEndpoint = MetricsEndpoint.start(metricsAddress, metrics);
        } catch (IOException | RuntimeException e) {
            forceStop = true;
            stop();
            throw e;
        }
        for (Running r : running) {
            LOG.info(() -> "serving " + r.endpoint().uri() + " " + r.server().getServices().stream()
                    .map(s -> s.getServiceDescriptor().getName()).toList());
        }
        if (metricsEndpoint != null) LOG.info(() -> "metrics on http://" + hostPort(metricsEndpoint.address()) + "/metrics");
        return this;
    }

    private Running bind(Listener listener) throws IOException {
        return switch (listener.endpoint()) {
            case Endpoint.Unix unix -> {
                SocketFile file = SocketFile.claim(unix.path());
                Server server;
                try {
                    server = build(NettyServerBuilder.forAddress(UnixDomainSocketAddress.of(file.stagedPath()))
                            .channelType(NioServerDomainSocketChannel.class), listener).start();
                } catch (IOException | RuntimeException e) {
                    file.abandon();
                    throw new IOException("cannot listen on " + unix.uri() + ": " + e.getMessage(), e);
                }
                try {
                    file.publish(socketMode);
                } catch (IOException | RuntimeException e) {
                    server.shutdownNow();
                    file.abandon();
                    throw new IOException("cannot publish socket " + unix.uri() + ": " + e.getMessage(), e);
                }
                yield new Running(unix, server, file);
            }
            case Endpoint.Tcp tcp -> {
                NettyServerBuilder netty = listener.tls() == null ? NettyServerBuilder.forAddress(tcp.socketAddress())
                        : NettyServerBuilder.forAddress(tcp.socketAddress(), listener.tls().serverCredentials());
                Server server = build(netty.channelType(NioServerSocketChannel.class), listener).start();
                int port = ((InetSocketAddress) server.getListenSockets().getFirst()).getPort();
                yield new Running(new Endpoint.Tcp(tcp.host(), port), server, null);
            }
        };
    }

    private Server build(NettyServerBuilder builder, Listener listener) {
        builder.bossEventLoopGroup(boss)
                .workerEventLoopGroup(workers)
                // Netty sets SO_KEEPALIVE on accepted channels by default; domain sockets have no such option
                .withChildOption(ChannelOption.SO_KEEPALIVE, null);
        // The executor is never gRPC's own for a unary call: UnaryHandOff hands a call to it once, with its request
        // complete (gRPC would hop per stream event); a method named in onTransportThread stays on the transport
        // thread (null: no hand-off for a call whose handler never waits); a streaming call gets the executor.
        builder.directExecutor().callExecutor(new ServerCallExecutorSupplier() {
            @Override
            public <ReqT, RespT> Executor getExecutor(ServerCall<ReqT, RespT> call, Metadata headers) {
                var method = call.getMethodDescriptor();
                return onTransportThread.contains(method.getFullMethodName())
                        || UnaryHandOff.handedOff(method, onTransportThread) ? null : executor;
            }
        });
        for (ServerServiceDefinition service : listener.services()) {
            builder.addService(UnaryHandOff.wrap(MalformedRequests.reject(ServerInterceptors.interceptForward(service, interceptors)),
                    executor, onTransportThread));
        }
        return builder.build();
    }

    /** The endpoints being served, in the order given to the builder, with real TCP ports. */
    public List<Endpoint> endpoints() {
        return running.stream().map(Running::endpoint).toList();
    }

    /** The address the metrics endpoint is bound to, if one was requested. */
    public InetSocketAddress metricsAddress() {
        return metricsEndpoint == null ? null : metricsEndpoint.address();
    }

    public CallMetrics metrics() {
        return metrics;
    }

    /**
     * Begins a graceful stop and returns: stop accepting, let calls in flight finish within the shutdown grace,
     * cancel what is left, remove socket files. {@link #awaitTermination()} returns when that is done.
     */
    public void shutdown() {
        if (state.compareAndSet(RUNNING, STOPPING)) {
            Thread.ofPlatform().name("csi4j-shutdown").start(this::stop);
        } else if (state.compareAndSet(NEW, STOPPED)) {
            terminated.countDown();
        }
    }

    /** Like {@link #shutdown()}, but cancels calls in flight at once. */
    public void shutdownNow() {
        forceStop = true;
        running.forEach(r -> r.server().shutdownNow());
        shutdown();
    }

    /**
     * On SIGTERM or SIGINT, begin a graceful {@link #shutdown()}; a second signal cancels what is still running.
     * The process then exits normally (status 0) once {@code main} returns, instead of the JVM's default 143.
     */
    public PluginServer stopOnSignals() {
        for (String name : List.of("TERM", "INT")) {
            sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> {
                if (state.get() == RUNNING) {
                    LOG.info(() -> "SIG" + signal.getName() + ": stopping, in-flight calls have " + shutdownGrace.toMillis() + " ms");
                    shutdown();
                } else {
                    LOG.info(() -> "SIG" + signal.getName() + " again: cancelling calls in flight");
                    shutdownNow();
                }
            });
        }
        return this;
    }

    /** Blocks until the server has stopped (after {@link #shutdown()} or a signal). */
    public void awaitTermination() throws InterruptedException {
        terminated.await();
    }

    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        return terminated.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    public boolean isTerminated() {
        return terminated.getCount() == 0;
    }

    @Override
    public void close() {
        shutdown();
        try {
            awaitTermination();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void stop() {
        try {
            running.forEach(r -> r.server().shutdown());
            long deadline = System.nanoTime() + shutdownGrace.toNanos();
            for (Running r : running) {
                long left = forceStop ? 0 : Math.max(0, deadline - System.nanoTime());
                if (!r.server().awaitTermination(left, TimeUnit.NANOSECONDS)) {
                    LOG.warning(() -> "calls still running on " + r.endpoint().uri() + " after the shutdown grace; cancelling them");
                    r.server().shutdownNow();
                    r.server().awaitTermination(5, TimeUnit.SECONDS);
                }
                if (r.socketFile() != null) r.socketFile().remove();
            }
            if (metricsEndpoint != null) metricsEndpoint.stop();
            boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            if (givenWorkers == null) workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            boss.terminationFuture().await(5, TimeUnit.SECONDS);
            if (givenWorkers == null) workers.terminationFuture().await(5, TimeUnit.SECONDS);
            executor.shutdown();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "error while stopping: " + e);
        } finally {
            state.set(STOPPED);
            terminated.countDown();
            LOG.info("stopped");
        }
    }

    /**
     * Event loops as the server makes its own (NIO, one per core, at least two), for a caller that shares them with
     * its client channels ({@link Builder#eventLoops}) and shuts them down itself after the server.
     */
    public static EventLoopGroup eventLoops() {
        return new MultiThreadIoEventLoopGroup(Math.max(2, Runtime.getRuntime().availableProcessors()),
                new DefaultThreadFactory("csi4j-io"), NioIoHandler.newFactory());
    }

    private static String hostPort(InetSocketAddress a) {
        String host = a.getAddress().getHostAddress();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
    }

    /** Parses {@code host:port} for {@code --metrics-address}; an empty host binds every interface. */
    public static InetSocketAddress parseHostPort(String text) {
        Objects.requireNonNull(text);
        int colon = text.lastIndexOf(':');
        if (colon < 0) throw new IllegalArgumentException("address '" + text + "' is not host:port");
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) host = host.substring(1, host.length() - 1);
        String port = text.substring(colon + 1);
        if (!port.matches("[0-9]{1,5}") || Integer.parseInt(port) > 65535) {
            throw new IllegalArgumentException("address '" + text + "' has no valid port");
        }
        // no host: loopback, as for tcp://:port endpoints; exposing metrics to the network takes naming a host
        return host.isEmpty() ? new InetSocketAddress(InetAddress.getLoopbackAddress(), Integer.parseInt(port))
                : new InetSocketAddress(host, Integer.parseInt(port));
    }

    public static final class Builder {
        private final List<Listener> listeners = new ArrayList<>();
        private List<ServerInterceptor> interceptors;
        private Set<PosixFilePermission> socketMode = EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
        // below Kubernetes' default 30 s termination grace, so sockets are removed before a SIGKILL
        private Duration shutdownGrace = Duration.ofSeconds(20);
        private CallMetrics metrics = new CallMetrics();
        private InetSocketAddress metricsAddress;
        private InFlightGuard guard = InFlightGuard.forCsi();
        private ValidationInterceptor validation = ValidationInterceptor.forCsi();
        private Set<String> onTransportThread = Set.of();
        private EventLoopGroup workers;

        private Builder() {}

        /** Serves {@code services} on {@code endpoint}; call once per endpoint. */
        public Builder listen(Endpoint endpoint, BindableService... services) {
            return listen(endpoint, Arrays.stream(services).map(BindableService::bindService).toList());
        }

        public Builder listen(Endpoint endpoint, List<ServerServiceDefinition> services) {
            Objects.requireNonNull(endpoint, "endpoint");
            if (services.isEmpty()) throw new IllegalArgumentException("no services for " + endpoint.uri());
            listeners.add(new Listener(endpoint, List.copyOf(services), null));
            return this;
        }

        /**
         * Serves {@code services} on a TCP {@code endpoint} with mutual TLS: the peer must present a certificate
         * signed by the configured CA (for the cluster's agent endpoint).
         */
        public Builder listen(Endpoint endpoint, MutualTls tls, BindableService... services) {
            Objects.requireNonNull(tls, "tls");
            if (!(endpoint instanceof Endpoint.Tcp)) throw new IllegalArgumentException("TLS needs a tcp:// endpoint, not " + endpoint.uri());
            if (services.length == 0) throw new IllegalArgumentException("no services for " + endpoint.uri());
            listeners.add(new Listener(endpoint, Arrays.stream(services).map(BindableService::bindService).toList(), tls));
            return this;
        }

        /**
         * Replaces the standard interceptor chain (see {@link Interceptors#standard()}); the first one in the
         * list sees a call first.
         */
        public Builder interceptors(List<ServerInterceptor> outermostFirst) {
            this.interceptors = List.copyOf(outermostFirst);
            return this;
        }

        /** The in-flight guard of the standard chain (default {@link InFlightGuard#forCsi()}). */
        public Builder guard(InFlightGuard guard) {
            this.guard = Objects.requireNonNull(guard);
            return this;
        }

        /** The validation of the standard chain (default {@link ValidationInterceptor#forCsi()}). */
        public Builder validation(ValidationInterceptor validation) {
            this.validation = Objects.requireNonNull(validation);
            return this;
        }

        /**
         * Methods (full names, {@code csi.v1.Controller/ControllerGetVolume}) whose handlers, interceptors included,
         * never wait: they run on the transport's event loop thread instead of being handed to a virtual thread.
         * A handler that may have to wait must move that part to a thread of its own. Every other method runs on
         * a virtual thread as usual.
         */
        public Builder onTransportThread(Set<String> fullMethodNames) {
            this.onTransportThread = Set.copyOf(fullMethodNames);
            return this;
        }

        /**
         * Serves on these event loops (see {@link PluginServer#eventLoops()}) instead of its own: a caller that also
         * dials from them (the cluster controller's channels to its agents) keeps its calls on one thread. The caller
         * shuts them down, after the server.
         */
        public Builder eventLoops(EventLoopGroup workers) {
            this.workers = Objects.requireNonNull(workers);
            return this;
        }

        /** Mode of UNIX socket files, e.g. {@code 0600} (the default) or {@code 0660}. */
        public Builder socketMode(int octal) {
            if ((octal & ~0777) != 0) throw new IllegalArgumentException("socket mode must be within 0777: " + Integer.toOctalString(octal));
            EnumSet<PosixFilePermission> mode = EnumSet.noneOf(PosixFilePermission.class);
            PosixFilePermission[] bits = PosixFilePermission.values(); // OWNER_READ .. OTHERS_EXECUTE, high bit first
            for (int i = 0; i < 9; i++) {
                if ((octal & (0400 >> i)) != 0) mode.add(bits[i]);
            }
            this.socketMode = mode;
            return this;
        }

        /** How long calls in flight may run after a shutdown request (default 20 s). */
        public Builder shutdownGrace(Duration grace) {
            if (grace.isNegative()) throw new IllegalArgumentException("negative shutdown grace");
            this.shutdownGrace = grace;
            return this;
        }

        /** The registry the standard chain records into and the metrics endpoint serves. */
        public Builder metrics(CallMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics);
            return this;
        }

        /** Serve Prometheus text on {@code http://address/metrics}. */
        public Builder metricsAddress(InetSocketAddress address) {
            this.metricsAddress = address;
            return this;
        }

        /** {@code host:port} as given to {@code --metrics-address}; null or empty means no metrics endpoint. */
        public Builder metricsAddress(String hostPort) {
            this.metricsAddress = hostPort == null || hostPort.isBlank() ? null : parseHostPort(hostPort);
            return this;
        }

        public PluginServer build() {
            if (listeners.isEmpty()) throw new IllegalStateException("no endpoint to listen on");
            return new PluginServer(this);
        }
    }
}
