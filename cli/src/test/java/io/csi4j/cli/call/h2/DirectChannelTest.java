package io.csi4j.cli.call.h2;

import io.csi4j.cli.testing.RawBytes;
import io.grpc.stub.StreamObserver;
import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one-shot channel against a real grpc-java server on a UNIX socket, each call made on grpc-java's own channel
 * too: the same answer or the same status (code and message) either way, for large requests (past the 64 KiB flow
 * control windows), large responses (many DATA frames, the 4 MiB bound and one octet over), non-OK statuses with
 * messages that need percent-encoding, an unknown method, an empty answer, a deadline, and a socket nobody serves.
 */
class DirectChannelTest {
    @TempDir
    static Path dir;
    static Server server;
    static EventLoopGroup loop;
    static ManagedChannel grpc;
    static DirectChannel direct;

    static MethodDescriptor<byte[], byte[]> method(String name) {
        return MethodDescriptor.<byte[], byte[]>newBuilder().setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName("test.Echo/" + name).setRequestMarshaller(RawBytes.MARSHALLER).setResponseMarshaller(RawBytes.MARSHALLER).build();
    }

    @BeforeAll
    static void serve() throws IOException {
        var service = ServerServiceDefinition.builder("test.Echo")
                .addMethod(method("Echo"), ServerCalls.asyncUnaryCall((byte[] req, StreamObserver<byte[]> out) -> {
                    out.onNext(req);
                    out.onCompleted();
                }))
                .addMethod(method("Big"), ServerCalls.asyncUnaryCall((byte[] req, StreamObserver<byte[]> out) -> {
                    byte[] answer = new byte[ByteBuffer.wrap(req).getInt()];
                    for (int i = 0; i < answer.length; i++) answer[i] = (byte) (i * 31);
                    out.onNext(answer);
                    out.onCompleted();
                }))
                .addMethod(method("Fail"), ServerCalls.asyncUnaryCall((byte[] req, StreamObserver<byte[]> out) -> {
                    String[] codeAndMessage = new String(req, StandardCharsets.UTF_8).split(":", 2);
                    out.onError(Status.fromCodeValue(Integer.parseInt(codeAndMessage[0])).withDescription(codeAndMessage[1])
                            .asRuntimeException());
                }))
                .addMethod(method("Empty"), ServerCalls.asyncUnaryCall((byte[] req, StreamObserver<byte[]> out) ->
                        out.onCompleted()))
                .addMethod(method("Slow"), ServerCalls.asyncUnaryCall((byte[] req, StreamObserver<byte[]> out) -> {
                    try {
                        Thread.sleep(3_000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    out.onNext(req);
                    out.onCompleted();
                }))
                .build();
        loop = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        Path socket = dir.resolve("test.sock");
        server = NettyServerBuilder.forAddress(UnixDomainSocketAddress.of(socket)).channelType(NioServerDomainSocketChannel.class)
                .bossEventLoopGroup(loop).workerEventLoopGroup(loop).addService(service).build().start();
        grpc = Channels.connect(new Endpoint.Unix(socket));
        direct = new DirectChannel(socket, () -> grpc);
    }

    @AfterAll
    static void stop() throws InterruptedException {
        grpc.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    /** The answer, or the status the call ended with, on one channel. */
    sealed interface Result {
        record Answer(byte[] bytes) implements Result {
            @Override
            public boolean equals(Object o) {
                return o instanceof Answer a && Arrays.equals(bytes, a.bytes);
            }

            @Override
            public int hashCode() {
                return Arrays.hashCode(bytes);
            }

            @Override
            public String toString() {
                return "Answer[" + bytes.length + " octets]";
            }
        }

        record Failed(Status.Code code, String description) implements Result {}
    }

    static Result call(Channel channel, String name, byte[] request, long deadlineMillis) {
        try {
            return new Result.Answer(ClientCalls.blockingUnaryCall(channel, method(name),
                    CallOptions.DEFAULT.withDeadlineAfter(deadlineMillis, TimeUnit.MILLISECONDS), request));
        } catch (StatusRuntimeException e) {
            return new Result.Failed(e.getStatus().getCode(), e.getStatus().getDescription());
        }
    }

    static Result same(String name, byte[] request) {
        var viaGrpc = call(grpc, name, request, 30_000);
        var viaDirect = call(direct, name, request, 30_000);
        assertEquals(viaGrpc, viaDirect, name);
        return viaDirect;
    }

    static byte[] size(int n) {
        return ByteBuffer.allocate(4).putInt(n).array();
    }

    @Test
    void smallAndLargeRequests() {
        for (int n : new int[] {0, 1, 100, 16_384, 65_535, 70_000, 1 << 20, (4 << 20) - 5}) {
            byte[] request = new byte[n];
            for (int i = 0; i < n; i++) request[i] = (byte) (i * 7);
            assertEquals(new Result.Answer(request), same("Echo", request), n + " octets");
        }
    }

    @Test
    void largeResponsesUpToTheBoundAndOneOver() {
        for (int n : new int[] {16_384, 100_000, 4 << 20}) {
            assertInstanceOf(Result.Answer.class, same("Big", size(n)), n + " octets");
        }
        assertEquals(new Result.Failed(Status.Code.RESOURCE_EXHAUSTED, "gRPC message exceeds maximum size 4194304: 4194305"),
                same("Big", size((4 << 20) + 1)));
    }

    @Test
    void nonOkStatusesWithTheirMessages() {
        assertEquals(new Result.Failed(Status.Code.NOT_FOUND, "volume x does not exist"),
                same("Fail", "5:volume x does not exist".getBytes(StandardCharsets.UTF_8)));
        // percent-encoded on the wire: '%', non-ASCII, a line break
        String message = "100% full: volume \u00e9t\u00e9 \u2713\nsecond line";
        assertEquals(new Result.Failed(Status.Code.RESOURCE_EXHAUSTED, message),
                same("Fail", ("8:" + message).getBytes(StandardCharsets.UTF_8)));
        String longMessage = "m".repeat(7_000);      // under the 8 KiB header list bound: shown whole
        assertEquals(new Result.Failed(Status.Code.INVALID_ARGUMENT, longMessage),
                same("Fail", ("3:" + longMessage).getBytes(StandardCharsets.UTF_8)));
        // over it: refused by both clients alike
        assertEquals(new Result.Failed(Status.Code.INTERNAL, "http2 exception"),
                same("Fail", ("3:" + "m".repeat(20_000)).getBytes(StandardCharsets.UTF_8)));
        assertEquals(Status.Code.UNIMPLEMENTED, ((Result.Failed) same("Nope", new byte[0])).code());
        // a server that completes without an answer resets the stream
        assertEquals(new Result.Failed(Status.Code.CANCELLED, "RST_STREAM closed stream. HTTP/2 error code: CANCEL"),
                same("Empty", new byte[0]));
    }

    @Test
    void aDeadlineEndsTheCallAsGrpcJavaSaysIt() {
        long started = System.nanoTime();
        var r = (Result.Failed) call(direct, "Slow", new byte[] {1}, 300);
        assertEquals(Status.Code.DEADLINE_EXCEEDED, r.code());
        assertTrue(r.description().startsWith("CallOptions deadline exceeded after "), r.description());
        assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(2_900 / 1000), "waited for the answer");
        // and the connection after it serves the next call
        assertEquals(new Result.Answer(new byte[] {2}), call(direct, "Echo", new byte[] {2}, 30_000));
    }

    @Test
    void theTimeoutHeaderHasAtMostEightDigits() {
        assertEquals("99999999n", DirectChannel.timeout(99_999_999L));
        assertEquals("100000u", DirectChannel.timeout(100_000_000L));
        assertEquals("30000000u", DirectChannel.timeout(30_000_000_000L));
        assertEquals("3600000m", DirectChannel.timeout(3_600_000_000_000L));
        assertEquals("2562048H", DirectChannel.timeout(Long.MAX_VALUE));
    }

    @Test
    void aSocketNobodyServesIsUnavailableWithTheSameCause() {
        Path none = dir.resolve("none.sock");
        var viaDirect = catching(new DirectChannel(none, () -> grpc));
        ManagedChannel other = Channels.connect(new Endpoint.Unix(none));
        try {
            var viaGrpc = catching(other);
            assertEquals(Status.Code.UNAVAILABLE, viaDirect.getCode());
            assertEquals(viaGrpc.getCode(), viaDirect.getCode());
            assertEquals(root(viaGrpc.getCause()).getMessage(), root(viaDirect.getCause()).getMessage());
        } finally {
            other.shutdownNow();
        }
    }

    private static Status catching(Channel channel) {
        var e = assertThrows(StatusRuntimeException.class, () -> ClientCalls.blockingUnaryCall(channel, method("Echo"),
                CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), new byte[0]));
        return e.getStatus();
    }

    private static Throwable root(Throwable t) {
        assertNotNull(t, "no cause");
        while (t.getCause() != null) t = t.getCause();
        return t;
    }
}
