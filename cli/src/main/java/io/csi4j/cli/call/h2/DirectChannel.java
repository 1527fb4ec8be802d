package io.csi4j.cli.call.h2;

import java.io.UncheckedIOException;
import java.io.ByteArrayInputStream;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * A gRPC channel for a one-shot CLI call on a UNIX domain socket: each unary call is one {@link UnaryExchange} on a
 * connection of its own, in the calling thread, with no event loop to start (the Netty channel's set-up was a third of
 * a CLI call's CPU). Every other kind of call (streams) goes to {@code fallback}, a grpc-java channel made when first
 * needed. Statuses are what grpc-java gives for the same events: a local failure is UNAVAILABLE with its cause, a
 * deadline the client ran out of is "CallOptions deadline exceeded after ...".
 */
public final class DirectChannel extends Channel {
    /** grpc-java's default maxInboundMessageSize, which the Netty path has too. */
    static final int MAX_RESPONSE = 4 * 1024 * 1024;

    private final Path socket;
    private final Supplier<Channel> fallback;
    private Channel fallbackChannel;

    public DirectChannel(Path socket, Supplier<Channel> fallback) {
        this.socket = socket;
        this.fallback = fallback;
    }

    @Override
    public <Q, A> ClientCall<Q, A> newCall(MethodDescriptor<Q, A> method, CallOptions options) {
        if (method.getType() != MethodDescriptor.MethodType.UNARY) {
            synchronized (this) {
                if (fallbackChannel == null) fallbackChannel = fallback.get();
            }
            return fallbackChannel.newCall(method, options);
        }
        return new Call<>(method, options);
    }

    @Override
    public String authority() {
        return "localhost";
    }

    private final class Call<Q, A> extends ClientCall<Q, A> {
        private final MethodDescriptor<Q, A> method;
        private final CallOptions options;
        private Listener<A> listener;
        private Metadata headers;
        private Q request;
        private volatile SocketChannel connection;
        private volatile boolean cancelled;

        Call(MethodDescriptor<Q, A> method, CallOptions options) {
            this.method = method;
            this.options = options;
        }

        @Override
        public void start(Listener<A> listener, Metadata headers) {
            this.listener = listener;
            this.headers = headers;
        }

        @Override
        public void request(int numMessages) {}

        @Override
        public void sendMessage(Q message) {
            if (request != null) throw new IllegalStateException("a unary call sends one message");
            request = message;
        }

        @Override
        public void cancel(String message, Throwable cause) {
            cancelled = true;
            close(connection);
        }

        @Override
        public void halfClose() {
            Status status;
            A response = null;
            try {
                var outcome = exchange();
                status = Status.fromCodeValue(outcome.code()).withDescription(outcome.message()).withCause(outcome.cause());
                if (outcome.code() == 0) response = method.parseResponse(new ByteArrayInputStream(outcome.response()));
            } catch (RuntimeException e) {
                status = Status.INTERNAL.withDescription("Failed to read message.").withCause(e);
            }
            A answer = response;
            Status end = status;
            Executor executor = options.getExecutor() == null ? Runnable::run : options.getExecutor();
            executor.execute(() -> {
                listener.onHeaders(new Metadata());
                if (answer != null) listener.onMessage(answer);
                listener.onClose(end, new Metadata());
            });
        }

        private UnaryExchange.Outcome exchange() {
            long start = System.nanoTime();
            var deadline = options.getDeadline();
            long remaining = deadline == null ? Long.MAX_VALUE : deadline.timeRemaining(TimeUnit.NANOSECONDS);
            if (remaining <= 0) {
                return UnaryExchange.Outcome.failed(UnaryExchange.DEADLINE_EXCEEDED,
                        "ClientCall started after CallOptions deadline was exceeded");
            }
            var fields = new ArrayList<Map.Entry<String, String>>();
            if (deadline != null) fields.add(Map.entry("grpc-timeout", timeout(remaining)));
            fields.addAll(asciiHeaders(headers));
            byte[] body = serialized(request);
            // parkNanos may return early (spuriously, or interrupted when the call is done): only the deadline closes
            var timer = deadline == null ? null : Thread.ofPlatform().daemon().name("csi4j-deadline").start(() -> {
                while (!Thread.currentThread().isInterrupted() && !deadline.isExpired()) {
                    LockSupport.parkNanos(deadline.timeRemaining(TimeUnit.NANOSECONDS));
                }
                if (!Thread.currentThread().isInterrupted()) close(connection);
            });
            try {
                connection = UnaryExchange.connect(socket);
                // a cancel or a deadline that came while connecting found no connection to close
                if (cancelled || (deadline != null && deadline.isExpired())) close(connection);
                return UnaryExchange.call(connection, method.getFullMethodName(), body, fields, MAX_RESPONSE);
            } catch (HpackException e) {
                return new UnaryExchange.Outcome(UnaryExchange.INTERNAL, "HPACK: " + e.getMessage(), null, e);
            } catch (IOException e) {
                if (cancelled) return new UnaryExchange.Outcome(UnaryExchange.CANCELLED, "Call cancelled", null, e);
                if (deadline != null && deadline.isExpired()) {
                    return UnaryExchange.Outcome.failed(UnaryExchange.DEADLINE_EXCEEDED, String.format(
                            "CallOptions deadline exceeded after %.9fs.", (System.nanoTime() - start) / 1e9));
                }
                if (e instanceof AsynchronousCloseException) return UnaryExchange.Outcome.failed(UnaryExchange.CANCELLED, "closed");
                return new UnaryExchange.Outcome(UnaryExchange.UNAVAILABLE, "io exception", null, e);
            } finally {
                if (timer != null) timer.interrupt();
                close(connection);
            }
        }

        private byte[] serialized(Q message) {
            try (InputStream in = method.streamRequest(message)) {
                var out = new ByteArrayOutputStream();
                in.transferTo(out);
                return out.toByteArray();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** The call's own metadata (ASCII keys; binary ones are not sent by the CLI). */
    private static List<Map.Entry<String, String>> asciiHeaders(Metadata headers) {
        var fields = new ArrayList<Map.Entry<String, String>>();
        if (headers == null) return fields;
        for (String key : headers.keys()) {
            if (key.endsWith(Metadata.BINARY_HEADER_SUFFIX)) continue;
            var values = headers.getAll(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER));
            if (values != null) for (String v : values) fields.add(Map.entry(key, v));
        }
        return fields;
    }

    /** The gRPC timeout header: at most 8 digits and a unit. */
    static String timeout(long nanos) {
        long[] scale = {1, 1_000, 1_000_000, 1_000_000_000L};
        String[] unit = {"n", "u", "m", "S"};
        for (int i = 0; i < scale.length; i++) {
            long v = nanos / scale[i] + (nanos % scale[i] == 0 ? 0 : 1);   // rounded up, without overflow
            if (v < 100_000_000L) return v + unit[i];
        }
        long hour = 3_600_000_000_000L;
        return Math.min(99_999_999L, nanos / hour + (nanos % hour == 0 ? 0 : 1)) + "H";
    }

    private static void close(SocketChannel c) {
        if (c == null) return;
        try {
            c.close();
        } catch (IOException ignored) {
            // closing to stop a call: nothing left to do
        }
    }
}
