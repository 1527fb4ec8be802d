package io.csi4j.driver.cluster;

import io.csi4j.proto.cluster.ListReplicasRequest;
import io.csi4j.proto.cluster.ListReplicasResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.logging.Logger;

/**
 * NodeAgent.ListReplicas asked of several agents at once ({@link Fanout}), each call under its own deadline: the wait
 * is the slowest agent's (at most about the deadline; Agent.call's silence rule may cut one sooner), never the sum of
 * the slow ones' one after another. Used by the scheduler at each tick and before a controller serves
 * ({@link ReplicationScheduler}), and by forget-node's look at the copies ({@link NodeForgetting}).
 */
final class ReplicaListings {
    private static final Logger LOG = Logger.getLogger(ReplicaListings.class.getName());

    private ReplicaListings() {}

    /**
     * The listing of each of {@code agents} that answered {@code request} within {@code ask}, in their order; one that
     * did not (silent, an error, past the deadline) is logged at fine and left out: what a missing listing means is the
     * caller's business.
     */
    static Map<Agent, ListReplicasResponse> of(List<Agent> agents, ListReplicasRequest request, Duration ask) {
        return answered(agents, agent -> agent.call(a -> a.nodeAgent().withDeadlineAfter(ask.toMillis(), TimeUnit.MILLISECONDS)
                        .listReplicas(request)),
                (agent, failed) -> LOG.fine(() -> "replication: " + agent.nodeId() + " did not list its replicas: " + failed.getMessage()));
    }

    /**
     * What each of {@code from} answered to {@code ask} (never null), all asked at once and every one waited for, in
     * the order of {@code from}, in a map the caller may change; one whose {@code ask} threw is handed to
     * {@code failed} and left out, and holds up no other.
     */
    static <K, T> Map<K, T> answered(List<K> from, Function<K, T> ask, BiConsumer<K, RuntimeException> failed) {
        Map<K, T> answers = new ConcurrentHashMap<>();
        Fanout.each(from, key -> {
            try {
                answers.put(key, ask.apply(key));
            } catch (RuntimeException e) {
                failed.accept(key, e);
            }
            return null;
        });
        Map<K, T> ordered = new LinkedHashMap<>();
        for (K key : from) {
            T answer = answers.get(key);
            if (answer != null) ordered.put(key, answer);
        }
        return ordered;
    }
}
