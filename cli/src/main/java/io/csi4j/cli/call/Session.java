package io.csi4j.cli.call;

import io.csi4j.cli.call.h2.DirectChannel;
import io.csi4j.proto.addons.volumegroup.ControllerGrpc.ControllerBlockingStub;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.GroupControllerGrpc;
import io.csi4j.proto.csi.IdentityGrpc;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import io.csi4j.proto.csi.SnapshotMetadataGrpc;
import io.grpc.stub.ClientCalls;

/**
 * One channel to a plugin; every stub it hands out carries a fresh deadline of {@code timeout}. A {@link #oneShot} session
 * (a CLI command's) makes its unary calls on a UNIX socket without grpc-java's transport ({@link DirectChannel}).
 */
public final class Session implements AutoCloseable {
    private final Endpoint endpoint;
    private final Channel channel;
    private final Duration timeout;
    /** grpc-java's channel, when one was made: closed with the session. */
    private ManagedChannel managed;

    /** A session on grpc-java's channel: many calls, streams, concurrency (bench, demo, tests). */
    public Session(Endpoint endpoint, Duration timeout) {
        this(endpoint, timeout, false);
    }

    private Session(Endpoint endpoint, Duration timeout, boolean direct) {
        this.endpoint = endpoint;
        this.timeout = timeout;
        Channel base = direct && endpoint instanceof Endpoint.Unix(Path path)
                ? new DirectChannel(path, this::managedChannel)
                : managedChannel();
        this.channel = ClientInterceptors.intercept(base, new NameEndpoint(endpoint));
    }

    /**
     * A session for one CLI command: unary calls on a UNIX endpoint go on a connection each, made in the calling thread
     * (no event loop, a third less CPU per command); streams and TCP endpoints use grpc-java. {@code CSI4J_DIRECT_CLIENT=0}
     * makes it a plain session.
     */
    public static Session oneShot(Endpoint endpoint, Duration timeout) {
        return new Session(endpoint, timeout, !"0".equals(System.getenv("CSI4J_DIRECT_CLIENT")));
    }

    /** For tests: a one-shot session whether or not the environment turns it off. */
    static Session direct(Endpoint endpoint, Duration timeout) {
        return new Session(endpoint, timeout, true);
    }

    private synchronized ManagedChannel managedChannel() {
        if (managed == null) managed = Channels.builder(endpoint).build();
        return managed;
    }

    public Endpoint endpoint() {
        return endpoint;
    }

    public IdentityGrpc.IdentityBlockingStub identity() {
        return IdentityGrpc.newBlockingStub(channel).withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    public ControllerGrpc.ControllerBlockingStub controller() {
        return ControllerGrpc.newBlockingStub(channel).withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    public NodeGrpc.NodeBlockingStub node() {
        return NodeGrpc.newBlockingStub(channel).withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    public GroupControllerGrpc.GroupControllerBlockingStub group() {
        return GroupControllerGrpc.newBlockingStub(channel).withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** SnapshotMetadata streams: the deadline covers the whole stream. */
    public SnapshotMetadataGrpc.SnapshotMetadataBlockingStub snapshotMetadata() {
        return SnapshotMetadataGrpc.newBlockingStub(channel).withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    public io.csi4j.proto.addons.identity.IdentityGrpc.IdentityBlockingStub addonsIdentity() {
        return io.csi4j.proto.addons.identity.IdentityGrpc.newBlockingStub(channel)
                .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    public ControllerBlockingStub volumeGroups() {
        return io.csi4j.proto.addons.volumegroup.ControllerGrpc.newBlockingStub(channel)
                .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Any unary call on this channel, with the session's deadline (for {@code csi4j call}). */
    public <Q, A> A call(MethodDescriptor<Q, A> method, Q request) {
        return ClientCalls.blockingUnaryCall(channel, method,
                CallOptions.DEFAULT.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS), request);
    }

    /** A plugin that cannot be reached is named in the error: "UNAVAILABLE: unix:///x.sock: No such file or directory". */
    private record NameEndpoint(Endpoint endpoint) implements ClientInterceptor {
        @Override
        public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                @Override
                public void start(Listener<A> listener, Metadata headers) {
                    super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                        @Override
                        public void onClose(Status status, Metadata trailers) {
                            // only a local failure (it has a cause) is about reaching the endpoint; a plugin's own UNAVAILABLE
                            // (a cluster controller naming a silent node) is shown as the plugin said it
                            boolean local = status.getCode() == Status.Code.UNAVAILABLE && status.getCause() != null;
                            super.onClose(local ? named(status) : status, trailers);
                        }
                    }, headers);
                }
            };
        }

        private Status named(Status status) {
            Throwable root = status.getCause();
            while (root != null && root.getCause() != null) root = root.getCause();
            String why = root != null && root.getMessage() != null ? root.getMessage() : status.getDescription();
            return Status.UNAVAILABLE.withDescription("cannot reach " + endpoint.uri() + (why == null ? "" : ": " + why))
                    .withCause(status.getCause());
        }
    }

    @Override
    public void close() {
        ManagedChannel made;
        synchronized (this) {
            made = managed;
        }
        if (made == null) return;
        made.shutdownNow();
        try {
            made.awaitTermination(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
