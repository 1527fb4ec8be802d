package io.csi4j.sdk.server;

import io.grpc.Context;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs a unary call on the executor in ONE hand-off, once its request is complete. With the executor as
 * gRPC's call executor, every stream event (the call's start, its message, its half-close) is a task of its own:
 * a client that writes its HEADERS and DATA frames apart (grpc-java's does) cost up to three virtual-thread
 * starts and carrier wake-ups per call, and the handler's {@code request(2)}, made on the executor, one more
 * wake-up of the event loop (docs/control-path.md measures them). Here the transport thread only collects the
 * request (no interceptor or handler code runs on it; the two messages grpc's unary handler asks for are asked
 * here) and, at the half-close, hands the whole call (start, message, half-close) to one virtual thread; the
 * events after that (cancel, complete, ready) follow on the executor in order, each in the call's
 * {@link Context}.
 *
 * <p>Served with {@code directExecutor()}: this wrapper is the only hop. Streaming methods are not wrapped and keep
 * the executor as their call executor.
 */
final class UnaryHandOff<ReqT, RespT> implements ServerCallHandler<ReqT, RespT> {
    private final ServerCallHandler<ReqT, RespT> next;
    private final Executor executor;

    private UnaryHandOff(ServerCallHandler<ReqT, RespT> next, Executor executor) {
        this.next = next;
        this.executor = executor;
    }

    /** {@code service} with each unary method not in {@code onTransportThread} handed off to {@code executor}. */
    static ServerServiceDefinition wrap(ServerServiceDefinition service, Executor executor, Set<String> onTransportThread) {
        var builder = ServerServiceDefinition.builder(service.getServiceDescriptor());
        for (ServerMethodDefinition<?, ?> method : service.getMethods()) builder.addMethod(wrap(method, executor, onTransportThread));
        return builder.build();
    }

    private static <Q, R> ServerMethodDefinition<Q, R> wrap(ServerMethodDefinition<Q, R> method, Executor executor,
                                                            Set<String> onTransportThread) {
        MethodDescriptor<Q, R> descriptor = method.getMethodDescriptor();
        if (!handedOff(descriptor, onTransportThread)) return method;
        return ServerMethodDefinition.create(descriptor, new UnaryHandOff<>(method.getServerCallHandler(), executor));
    }

    /** Whether calls of this method run through this wrapper (then the server must not hop for them itself). */
    static boolean handedOff(MethodDescriptor<?, ?> method, Set<String> onTransportThread) {
        return method.getType() == MethodDescriptor.MethodType.UNARY && !onTransportThread.contains(method.getFullMethodName());
    }

    @Override
    public ServerCall.Listener<ReqT> startCall(ServerCall<ReqT, RespT> call, Metadata headers) {
        // what grpc's unary handler asks for: the request, and one more to see a client that sends two; asked
        // here, on the transport thread, so the handler's own request(2) later changes nothing on the wire
        call.request(2);
        return new Collecting(call, headers, Context.current());
    }

    /**
     * The call as the handler sees it: its request(n) is answered by the credits asked for at the start, so it
     * is not passed on (from the executor it would be one more wake-up of the event loop, for nothing).
     */
    private static final class Requested<Q, R> extends ForwardingServerCall.SimpleForwardingServerCall<Q, R> {
        Requested(ServerCall<Q, R> call) {
            super(call);
        }

        @Override
        public void request(int numMessages) {}
    }

    /** Buffers the request on the transport thread until the half-close, then serializes everything on the executor. */
    private final class Collecting extends ServerCall.Listener<ReqT> {
        private final ServerCall<ReqT, RespT> call;
        private final Metadata headers;
        private final Context context;
        private final List<ReqT> messages = new ArrayList<>(1);
        private final Queue<Runnable> pending = new ConcurrentLinkedQueue<>();
        private final AtomicInteger queued = new AtomicInteger();
        private boolean handedOff;                 // transport thread only
        private ServerCall.Listener<ReqT> delegate; // executor side only, set by the first task

        Collecting(ServerCall<ReqT, RespT> call, Metadata headers, Context context) {
            this.call = call;
            this.headers = headers;
            this.context = context;
        }

        @Override
        public void onMessage(ReqT message) {
            if (!handedOff) messages.add(message);
            else run(() -> delegate.onMessage(message));
        }

        @Override
        public void onHalfClose() {
            if (handedOff) {
                run(() -> delegate.onHalfClose());
                return;
            }
            handedOff = true;
            List<ReqT> request = List.copyOf(messages);
            messages.clear();
            run(() -> {
                delegate = next.startCall(new Requested<>(call), headers);
                for (ReqT message : request) delegate.onMessage(message);
                delegate.onHalfClose();
            });
        }

        @Override
        public void onCancel() {
            // cancelled before its request was complete: no handler ever started, nothing to tell
            if (handedOff) run(() -> delegate.onCancel());
        }

        @Override
        public void onComplete() {
            if (handedOff) run(() -> delegate.onComplete());
        }

        @Override
        public void onReady() {
            if (handedOff) run(() -> delegate.onReady());
        }

        /** In order, one at a time, on the executor; the first task's thread drains what arrives while it runs. */
        private void run(Runnable task) {
            pending.add(task);
            if (queued.getAndIncrement() == 0) executor.execute(this::drain);
        }

        private void closeQuietly(RuntimeException e) {
            try {
                call.close(Status.UNKNOWN.withDescription("Application error processing RPC").withCause(e), new Metadata());
            } catch (RuntimeException alreadyClosed) {
                e.addSuppressed(alreadyClosed);
            }
        }

        private void drain() {
            do {
                Runnable task = pending.poll();
                try {
                    context.run(task);
                } catch (RuntimeException e) {
                    // as gRPC does with a listener that throws (the interceptors' mapping catches what a handler
                    // throws, so this is a bug): the call ends, the events after it still run
                    closeQuietly(e);
                }
            } while (queued.decrementAndGet() != 0);
        }
    }
}
