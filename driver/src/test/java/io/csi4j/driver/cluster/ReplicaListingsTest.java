package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The scheduler's and forget-node's listing ({@link ReplicaListings#answered}): every agent asked at once, so a start
 * with several slow agents waits about one deadline, not one per agent. Proved without timing: each ask waits at a
 * barrier that only opens once all of them are in flight (asked one after another, the first would wait in vain).
 */
class ReplicaListingsTest {
    @Test
    void everyOneIsAskedAtOnceAndEachIsWaitedFor() {
        List<String> nodes = List.of("node-c", "node-a", "node-b", "node-d");
        var barrier = new CyclicBarrier(nodes.size());
        Map<String, RuntimeException> failed = new ConcurrentHashMap<>();
        var answers = ReplicaListings.answered(nodes, node -> {
            try {
                barrier.await(60, TimeUnit.SECONDS);        // generous: only a sequential listing would wait it out
                if (node.equals("node-d")) Thread.sleep(500);  // the slowest is waited for too
            } catch (Exception e) {
                throw new IllegalStateException(node + " was asked alone: " + e, e);
            }
            return node + " listed";
        }, failed::put);
        assertEquals(Map.of(), failed);
        assertEquals(List.of("node-c", "node-a", "node-b", "node-d"), List.copyOf(answers.keySet()), "in the order asked");
        assertEquals("node-d listed", answers.get("node-d"));
    }

    @Test
    void oneThatFailsIsHandedOverAndLeftOutWithoutHoldingUpTheOthers() {
        Map<String, RuntimeException> failed = new ConcurrentHashMap<>();
        var answers = ReplicaListings.answered(List.of("node-a", "node-b", "node-c"), node -> {
            if (node.equals("node-b")) throw new IllegalStateException("node-b is silent");
            return node.length();
        }, failed::put);
        assertEquals(List.of("node-a", "node-c"), List.copyOf(answers.keySet()));
        assertEquals(List.of("node-b"), List.copyOf(failed.keySet()));
        assertEquals("node-b is silent", failed.get("node-b").getMessage());
        answers.remove("node-a");                           // the scheduler drops a forgotten node's listing from its map
        assertEquals(List.of("node-c"), List.copyOf(answers.keySet()));
    }
}
