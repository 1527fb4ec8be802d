package io.csi4j.driver.cluster;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * When one agent last answered anything (a routed call, an error it sent, an identification, a heartbeat), on a
 * monotonic clock, and the rule that tells a silent agent from a slow one: a call is cut only when the agent has said
 * nothing at all for longer than the bound while the call was outstanding. A long copy or a big listing whose agent
 * still answers its heartbeats is never cut. Before its first answer, silence counts from when the controller first
 * dialled it (the controller keeps no state: after a restart it waits the whole bound again, the safe direction).
 */
final class LastAnswer {
    private final LongSupplier clock;
    private volatile long at;

    /** {@code clock}: nanoseconds, monotonic ({@code System::nanoTime} outside tests). */
    LastAnswer(LongSupplier clock) {
        this.clock = clock;
        this.at = clock.getAsLong();
    }

    void answered() {
        at = clock.getAsLong();
    }

    long now() {
        return clock.getAsLong();
    }

    /** How long the agent has said nothing. */
    Duration silentFor() {
        return Duration.ofNanos(Math.max(0, clock.getAsLong() - at));
    }

    /** Whether a call outstanding since {@code callStart} (this clock) is to be cut now. */
    boolean cuts(long callStart, Duration bound) {
        return cut(at, callStart, clock.getAsLong(), bound);
    }

    /**
     * The rule: cut when the agent has been silent for longer than {@code bound}, counted from the later of its last
     * answer and the call's start. The start counts so that every call gives an agent silent for long (stopped, then
     * continued) the whole bound to answer, instead of failing at once on stale news.
     */
    static boolean cut(long lastAnswer, long callStart, long now, Duration bound) {
        return now - Math.max(lastAnswer, callStart) > bound.toNanos();
    }
}
