package io.csi4j.driver.cluster;

import io.grpc.ManagedChannel;
import io.netty.channel.EventLoop;
import io.netty.util.internal.ThreadExecutorMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The channels to one agent: a shared one, and one per controller event loop that forwards to it. A call
 * forwarded from an event loop (see {@link TransportThread}) then goes out and gets its answer on that same thread,
 * and the answer goes back to the CO from there: a pass-through call changes threads nowhere. Each such channel is
 * one more TLS connection per agent, as many as the controller has event loops (the number of cores).
 */
final class LoopChannels {
    private final ManagedChannel shared;
    private final Function<EventLoop, ManagedChannel> dialOn;
    private final Map<EventLoop, ManagedChannel> byLoop = new ConcurrentHashMap<>();
    private volatile boolean closed;

    LoopChannels(ManagedChannel shared, Function<EventLoop, ManagedChannel> dialOn) {
        this.shared = shared;
        this.dialOn = dialOn;
    }

    ManagedChannel shared() {
        return shared;
    }

    /** The channel of the event loop running this code, or the shared one on any other thread. */
    ManagedChannel current() {
        if (closed || !(ThreadExecutorMap.currentExecutor() instanceof EventLoop loop)) return shared;
        ManagedChannel channel = byLoop.computeIfAbsent(loop, dialOn::apply);
        if (closed) channel.shutdownNow();  // raced with close: the call fails as on a closed channel
        return channel;
    }

    /** After a silence: the next call dials at once instead of after gRPC's backoff. */
    void resetConnectBackoff() {
        shared.resetConnectBackoff();
        byLoop.values().forEach(ManagedChannel::resetConnectBackoff);
    }

    /** Shuts every per-loop channel down (before their event loops: {@link ClusterController#close()}). */
    void closeLoopChannels() throws InterruptedException {
        closed = true;
        byLoop.values().forEach(ManagedChannel::shutdownNow);
        for (ManagedChannel channel : byLoop.values()) channel.awaitTermination(2, TimeUnit.SECONDS);
    }
}
