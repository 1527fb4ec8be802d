package io.csi4j.sdk.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.GetPluginInfoRequest;
import io.csi4j.proto.csi.GetPluginInfoResponse;
import io.csi4j.proto.csi.IdentityGrpc;
import io.csi4j.sdk.example.ExampleIdentity;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link UnaryHandOff} on a real UNIX socket: one hand-off, only once the request is complete, in the call's context. */
class UnaryHandOffTest {
    @TempDir
    Path dir;

    /** GetPluginInfo that counts its calls and notes its thread and its context's deadline. */
    static final class Recording extends IdentityGrpc.IdentityImplBase {
        final AtomicInteger calls = new AtomicInteger();
        final AtomicReference<Thread> thread = new AtomicReference<>();
        final AtomicReference<Deadline> deadline = new AtomicReference<>();

        @Override
        public void getPluginInfo(GetPluginInfoRequest request, StreamObserver<GetPluginInfoResponse> out) {
            calls.incrementAndGet();
            thread.set(Thread.currentThread());
            deadline.set(Context.current().getDeadline());
            out.onNext(GetPluginInfoResponse.newBuilder().setName(ExampleIdentity.NAME).setVendorVersion("1.0.0").build());
            out.onCompleted();
        }
    }

    private static ManagedChannel connect(PluginServer server) {
        return Channels.connect(server.endpoints().getFirst());
    }

    private static PluginServer serve(Path dir, Recording identity) throws Exception {
        return PluginServer.builder().listen(new Endpoint.Unix(dir.resolve("csi.sock")), identity).build().start();
    }

    /** A call whose request is sent, and half-closed only when the test says so; the answer's status completes. */
    private static final class OpenCall {
        final ClientCall<GetPluginInfoRequest, GetPluginInfoResponse> call;
        final CompletableFuture<Status> closed = new CompletableFuture<>();

        OpenCall(ManagedChannel channel) {
            call = channel.newCall(IdentityGrpc.getGetPluginInfoMethod(), CallOptions.DEFAULT);
            call.start(new ClientCall.Listener<>() {
                @Override
                public void onClose(Status status, Metadata trailers) {
                    closed.complete(status);
                }
            }, new Metadata());
            call.request(2);
        }
    }

    @Test
    void aUnaryCallRunsOnAVirtualThreadInItsContext() throws Exception {
        var identity = new Recording();
        try (PluginServer server = serve(dir, identity)) {
            ManagedChannel channel = connect(server);
            try {
                var info = IdentityGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS)
                        .getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
                assertEquals(ExampleIdentity.NAME, info.getName());
                assertEquals(1, identity.calls.get());
                assertTrue(identity.thread.get().isVirtual(), "the handler runs on a virtual thread, not the event loop: "
                        + identity.thread.get());
                assertNotNull(identity.deadline.get(), "the call's context (its deadline) reaches the handler");
                for (int i = 0; i < 50; i++) IdentityGrpc.newBlockingStub(channel).getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
                assertEquals(51, identity.calls.get());
            } finally {
                channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void theHandlerStartsOnlyAtTheHalfCloseAndACallCancelledBeforeNeverStartsIt() throws Exception {
        var identity = new Recording();
        try (PluginServer server = serve(dir, identity)) {
            ManagedChannel channel = connect(server);
            try {
                var open = new OpenCall(channel);
                open.call.sendMessage(GetPluginInfoRequest.getDefaultInstance());
                Thread.sleep(300);   // the request is on the server, the call not half-closed
                assertEquals(0, identity.calls.get(), "no handler before the request is complete");
                open.call.halfClose();
                assertEquals(Status.Code.OK, open.closed.get(30, TimeUnit.SECONDS).getCode());
                assertEquals(1, identity.calls.get());

                var cancelled = new OpenCall(channel);
                cancelled.call.sendMessage(GetPluginInfoRequest.getDefaultInstance());
                Thread.sleep(300);
                cancelled.call.cancel("the client gave up", null);
                assertEquals(Status.Code.CANCELLED, cancelled.closed.get(30, TimeUnit.SECONDS).getCode());
                Thread.sleep(300);
                assertEquals(1, identity.calls.get(), "a call cancelled before its half-close never reaches the handler");
                // and the server goes on serving
                IdentityGrpc.newBlockingStub(channel).getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
                assertEquals(2, identity.calls.get());
            } finally {
                channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void twoRequestsInOneUnaryCallAreRefusedWithoutRunningTheHandler() throws Exception {
        var identity = new Recording();
        try (PluginServer server = serve(dir, identity)) {
            ManagedChannel channel = connect(server);
            try {
                var open = new OpenCall(channel);
                open.call.sendMessage(GetPluginInfoRequest.getDefaultInstance());
                open.call.sendMessage(GetPluginInfoRequest.getDefaultInstance());
                open.call.halfClose();
                Status status = open.closed.get(30, TimeUnit.SECONDS);
                // grpc's unary handler closes it INTERNAL ("Too many requests"); the client may see the stream's
                // reset (CANCELLED) first: either way it fails
                assertTrue(status.getCode() == Status.Code.INTERNAL || status.getCode() == Status.Code.CANCELLED, status.toString());
                assertEquals(0, identity.calls.get());
            } finally {
                channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
        }
    }
}
