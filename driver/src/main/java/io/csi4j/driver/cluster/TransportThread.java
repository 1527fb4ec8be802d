package io.csi4j.driver.cluster;

import io.grpc.Context;
import io.grpc.stub.StreamObserver;
import io.netty.util.internal.ThreadExecutorMap;

/**
 * The controller's pass-through calls run on the transport's event loop thread (see
 * {@code Services.onTransportThread()}): their routing is map lookups and the agent call is asynchronous,
 * so no thread is handed the call and none waits for the agent. What may wait (a refresh of the agent directory,
 * asking several nodes, a blocking agent call) calls {@link #mayWait()} first, and {@link #route} then runs the
 * whole routing again on a virtual thread. Routing up to its first wait must therefore change nothing.
 */
final class TransportThread {
    private TransportThread() {}

    /** Thrown on a transport thread by what would wait; {@link #route} catches it. No stack: it is control flow. */
    static final class Hop extends RuntimeException {
        private static final Hop INSTANCE = new Hop();

        private Hop() {
            super("a call that waits reached a transport thread outside TransportThread.route", null, false, false);
        }
    }

    /** True on a Netty event loop thread. */
    static boolean current() {
        return ThreadExecutorMap.currentExecutor() != null;
    }

    /** Called before anything that waits: on a transport thread it throws {@link Hop}, elsewhere it does nothing. */
    static void mayWait() {
        if (current()) throw Hop.INSTANCE;
    }

    /**
     * Runs {@code routing} here; if it has to wait, again on a virtual thread within the call's context (deadline and
     * cancellation), where a failure goes to {@code out} as the handler's own exception would. The handler has then
     * returned, so a CO's cancellation releases the in-flight guard's keys at once; what the routing still asks of
     * an agent runs in that cancelled context and fails without reaching it, as a blocked handler's calls did.
     */
    static void route(StreamObserver<?> out, Runnable routing) {
        try {
            routing.run();
        } catch (Hop hop) {
            Runnable again = Context.current().wrap(() -> {
                try {
                    routing.run();
                } catch (RuntimeException | Error e) {
                    out.onError(e);
                }
            });
            Thread.ofVirtual().name("csi4j-route").start(again);
        }
    }
}
