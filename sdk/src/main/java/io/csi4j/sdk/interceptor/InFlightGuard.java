package io.csi4j.sdk.interceptor;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.Message;
import io.csi4j.sdk.StatusMapping;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * At most one operation per object at a time (the spec's "operation pending for volume"). Each guarded RPC
 * names the objects it touches through a {@link KeyExtractor}. A second request that is identical (same method,
 * same serialized bytes) waits for the first and gets the same answer, response or error; a different request on
 * a busy key answers ABORTED at once. Keys are released when the call completes, fails, or is cancelled.
 *
 * <p>Only unary methods are guarded. Keys are released when the call is closed, or, if the client cancels,
 * when the service method returns: a handler that ignores cancellation keeps its objects locked until it is
 * really done, which is what protects them.
 */
public final class InFlightGuard implements ServerInterceptor {
    private final Map<String, KeyExtractor<Object>> extractors;
    private final Map<String, Flight> busy = new HashMap<>();

    private InFlightGuard(Map<String, KeyExtractor<Object>> extractors) {
        this.extractors = Map.copyOf(extractors);
    }

    /** The guard with {@link CsiKeys} for every mutating CSI and CSI-Addons RPC. */
    public static InFlightGuard forCsi() {
        return builder().csiDefaults().build();
    }

    /** An empty guard; add keys per method. */
    public static Builder builder() {
        return new Builder();
    }

    /** Keys held right now (for diagnostics and tests). */
    public Set<String> busyKeys() {
        synchronized (busy) {
            return Set.copyOf(busy.keySet());
        }
    }

    /**
     * One operation in flight: the call that leads it, and the answer followers get. Its request is serialized only
     * when a second call on one of its keys needs the bytes to compare (under the {@code busy} lock): almost every
     * call leads alone, and serializing each request once more was work per call.
     */
    private static final class Flight {
        final String method;
        final Request request;
        final Set<String> keys;
        final CompletableFuture<Outcome> outcome = new CompletableFuture<>();

        Flight(String method, Request request, Set<String> keys) {
            this.method = method;
            this.request = request;
            this.keys = keys;
        }
    }

    /** A request and, once asked for, its deterministic bytes; used under the {@code busy} lock only. */
    private static final class Request {
        private final MethodDescriptor<Object, ?> method;
        private final Object message;
        private byte[] bytes;

        @SuppressWarnings("unchecked")
        Request(MethodDescriptor<?, ?> method, Object message) {
            this.method = (MethodDescriptor<Object, ?>) method;
            this.message = message;
        }

        byte[] bytes() {
            if (bytes == null) bytes = serialize(method, message);
            return bytes;
        }
    }

    private record Outcome(List<Object> messages, Status status, Metadata trailers) {}

    private sealed interface Decision {}
    private record Lead(Flight flight) implements Decision {}
    private record Follow(Flight flight) implements Decision {}
    private record Busy(String key, String otherMethod) implements Decision {}

    private Decision decide(String method, Request request, Set<String> keys) {
        synchronized (busy) {
            for (String key : keys) {
                Flight flight = busy.get(key);
                if (flight == null) continue;
                if (flight.method.equals(method) && Arrays.equals(flight.request.bytes(), request.bytes()) && flight.keys.equals(keys)) {
                    return new Follow(flight);
                }
                return new Busy(key, flight.method);
            }
            Flight flight = new Flight(method, request, keys);
            keys.forEach(k -> busy.put(k, flight));
            return new Lead(flight);
        }
    }

    /** Releases the flight's keys (once) and hands its outcome to the followers. */
    private void finish(Flight flight, Outcome outcome) {
        synchronized (busy) {
            flight.keys.forEach(k -> busy.remove(k, flight));
        }
        flight.outcome.complete(outcome);
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                 ServerCallHandler<ReqT, RespT> next) {
        MethodDescriptor<ReqT, RespT> method = call.getMethodDescriptor();
        KeyExtractor<Object> extractor = extractors.get(method.getFullMethodName());
        if (extractor == null || method.getType() != MethodDescriptor.MethodType.UNARY) return next.startCall(call, headers);
        Leading<ReqT, RespT> leading = new Leading<>(call);
        return new Gate<>(next.startCall(leading, headers), call, leading, extractor);
    }

    /** The call as the service sees it: while it leads a flight, its answer is recorded for the followers. */
    private final class Leading<ReqT, RespT> extends SimpleForwardingServerCall<ReqT, RespT> {
        volatile Flight flight;
        volatile boolean closed;
        private final List<Object> sent = new ArrayList<>();

        Leading(ServerCall<ReqT, RespT> call) {
            super(call);
        }

        @Override
        public void sendMessage(RespT message) {
            if (flight != null) sent.add(message);
            super.sendMessage(message);
        }

        @Override
        public void close(Status status, Metadata trailers) {
            Flight f = flight;
            closed = true;
            // release before the client sees the answer, so its next call on the same object is not refused
            if (f != null) finish(f, new Outcome(List.copyOf(sent), status, copy(trailers)));
            super.close(status, trailers);
        }
    }

    /** Decides, once the request is complete, whether this call leads, follows or is refused. */
    private final class Gate<ReqT, RespT> extends SimpleForwardingServerCallListener<ReqT> {
        private final ServerCall<ReqT, RespT> call;
        private final Leading<ReqT, RespT> leading;
        private final KeyExtractor<Object> extractor;
        private ReqT request;
        private volatile boolean cancelled;
        private Flight led;

        Gate(ServerCall.Listener<ReqT> delegate, ServerCall<ReqT, RespT> call, Leading<ReqT, RespT> leading,
             KeyExtractor<Object> extractor) {
            super(delegate);
            this.call = call;
            this.leading = leading;
            this.extractor = extractor;
        }

        @Override
        public void onMessage(ReqT message) {
            request = message;
            super.onMessage(message);
        }

        @Override
        public void onHalfClose() {
            MethodDescriptor<ReqT, RespT> method = call.getMethodDescriptor();
            Set<String> keys = request == null ? Set.of() : new LinkedHashSet<>(extractor.keys(request));
            keys.removeIf(k -> k == null || k.isBlank());
            if (keys.isEmpty()) {
                super.onHalfClose();
                return;
            }
            switch (decide(method.getFullMethodName(), new Request(method, request), keys)) {
                case Lead(Flight flight) -> {
                    led = flight;
                    leading.flight = flight;
                    try {
                        super.onHalfClose();
                    } catch (RuntimeException | Error e) {
                        if (!leading.closed) finish(flight, new Outcome(List.of(), StatusMapping.toStatus(e), new Metadata()));
                        throw e;
                    }
                    if (cancelled && !leading.closed) abandon(flight);
                }
                case Follow(Flight flight) -> flight.outcome.thenAccept(this::replay);
                case Busy(String key, String other) -> call.close(Status.ABORTED.withDescription(
                        method.getBareMethodName() + ": an operation is pending for " + key + " ("
                                + MethodDescriptor.extractBareMethodName(other) + "); retry later"), new Metadata());
            }
        }

        @Override
        public void onCancel() {
            cancelled = true;
            // the service method has returned (listener callbacks are serialized) without closing the call
            Flight flight = led;
            if (flight != null && !leading.closed) abandon(flight);
            super.onCancel();
        }

        private void abandon(Flight flight) {
            finish(flight, new Outcome(List.of(), Status.ABORTED.withDescription(
                    call.getMethodDescriptor().getBareMethodName() + ": the identical call in flight was cancelled; retry"), new Metadata()));
        }

        @SuppressWarnings("unchecked")
        private void replay(Outcome outcome) {
            if (cancelled) return;
            Status status = outcome.status();
            if (status.getCode() == Status.Code.CANCELLED) {
                status = Status.ABORTED.withDescription(call.getMethodDescriptor().getBareMethodName()
                        + ": the identical call in flight was cancelled; retry");
            }
            try {
                if (!outcome.messages().isEmpty()) {
                    call.sendHeaders(new Metadata());
                    for (Object message : outcome.messages()) call.sendMessage((RespT) message);
                }
                call.close(status, copy(outcome.trailers()));
            } catch (IllegalStateException raced) {
                // this follower was cancelled while the answer was on its way
            }
        }
    }

    private static Metadata copy(Metadata trailers) {
        Metadata copy = new Metadata();
        copy.merge(trailers);
        return copy;
    }

    /** Deterministic bytes (map entries in key order), so equal requests compare equal. */
    private static <ReqT> byte[] serialize(MethodDescriptor<ReqT, ?> method, ReqT request) {
        try {
            if (request instanceof Message message) {
                byte[] out = new byte[message.getSerializedSize()];
                CodedOutputStream stream = CodedOutputStream.newInstance(out);
                stream.useDeterministicSerialization();
                message.writeTo(stream);
                stream.checkNoSpaceLeft();
                return out;
            }
            try (InputStream in = method.streamRequest(request)) {
                return in.readAllBytes();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static final class Builder {
        private final Map<String, KeyExtractor<Object>> extractors = new HashMap<>();

        private Builder() {}

        /** Guards {@code method} with the keys {@code keys} derives from each request; replaces earlier keys. */
        @SuppressWarnings("unchecked")
        public <ReqT> Builder key(MethodDescriptor<ReqT, ?> method, KeyExtractor<? super ReqT> keys) {
            extractors.put(method.getFullMethodName(), request -> ((KeyExtractor<Object>) keys).keys(request));
            return this;
        }

        /** Same, by full method name ({@code csi.v1.Controller/CreateVolume}), for requests of any type. */
        public Builder key(String fullMethodName, KeyExtractor<Object> keys) {
            extractors.put(fullMethodName, keys);
            return this;
        }

        /** Stops guarding {@code fullMethodName}. */
        public Builder unguarded(String fullMethodName) {
            extractors.remove(fullMethodName);
            return this;
        }

        /** Adds {@link CsiKeys}' defaults (later calls to {@link #key} override them per method). */
        public Builder csiDefaults() {
            CsiKeys.addDefaults(this);
            return this;
        }

        public InFlightGuard build() {
            return new InFlightGuard(extractors);
        }
    }
}
