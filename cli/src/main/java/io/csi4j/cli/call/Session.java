package io.csi4j.cli.call;

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
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import io.csi4j.proto.csi.SnapshotMetadataGrpc;
import io.grpc.stub.ClientCalls;

/** One channel to a plugin; every stub it hands out carries a fresh deadline of {@code timeout}. */
public final class Session implements AutoCloseable {
    private final Endpoint endpoint;
    private final ManagedChannel channel;
    private final Duration timeout;

    public Session(Endpoint endpoint, Duration timeout) {
        this.endpoint = endpoint;
        this.channel = Channels.builder(endpoint).intercept(new NameEndpoint(endpoint)).build();
        this.timeout = timeout;
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
        channel.shutdownNow();
        try {
            channel.awaitTermination(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
