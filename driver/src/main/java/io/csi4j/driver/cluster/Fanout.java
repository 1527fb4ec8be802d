package io.csi4j.driver.cluster;

import io.csi4j.sdk.CsiException;
import io.grpc.Context;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;

/**
 * Asks several agents at once, one virtual thread each. The caller's gRPC context (deadline, cancellation)
 * goes with every call. All silent nodes are named together in one UNAVAILABLE.
 */
final class Fanout {
    private Fanout() {}

    /** What the agents that answered said, and the messages of those that did not. */
    record Answers<T>(Map<Agent, T> results, List<String> silent) {
        /** The results, or one UNAVAILABLE naming every silent node. */
        Map<Agent, T> fromAll() {
            if (!silent.isEmpty()) throw CsiException.unavailable(String.join("; ", silent));
            return results;
        }
    }

    /** Results in the order of {@code agents}; a failure other than silence is thrown as it is. */
    static <T> Answers<T> all(List<Agent> agents, Function<Agent, T> call) {
        TransportThread.mayWait();
        Map<Agent, Future<T>> futures = new LinkedHashMap<>();
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            Context context = Context.current();
            for (Agent agent : agents) futures.put(agent, executor.submit(context.wrap(() -> agent.call(call))));
        }
        Map<Agent, T> results = new LinkedHashMap<>();
        List<String> silent = new ArrayList<>();
        for (var e : futures.entrySet()) {
            try {
                results.put(e.getKey(), e.getValue().get());
            } catch (ExecutionException failure) {
                if (failure.getCause() instanceof CsiException c && c.code() == Status.Code.UNAVAILABLE) silent.add(c.getMessage());
                else if (failure.getCause() instanceof RuntimeException r) throw r;
                else throw new IllegalStateException(failure.getCause());
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                throw CsiException.aborted("interrupted while asking the nodes");
            }
        }
        return new Answers<>(results, silent);
    }

    /**
     * Runs {@code task} on every one of {@code agents} (agents, or anything asked once per agent) at once and waits for
     * all; failures are the task's business (one that throws is dropped: it neither stops the others nor is rethrown).
     */
    static <A> void each(List<A> agents, Function<A, Void> task) {
        TransportThread.mayWait();
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            for (A agent : agents) executor.submit(() -> task.apply(agent));
        }
    }
}
