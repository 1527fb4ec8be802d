package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Review 2026-11-27 s9 (docs/review-2026-11-27-s9.md, F4): the forgotten marks only grow. ClusterStatus.ForgetNode and
 * the scheduler's tick both set them; a tick whose union was computed before a ForgetNode must not drop its mark.
 */
class AgentsForgottenTest {
    @Test
    void aStaleUnionNeverDropsAMarkSetSinceAndTheEarliestTimeIsKept() {
        try (var agents = new Agents(List.of(), null, Duration.ofSeconds(5), Duration.ofMinutes(10))) {
            Instant t1 = Instant.ofEpochSecond(1_000), t2 = Instant.ofEpochSecond(2_000);
            agents.forgotten(Map.of("node-a", t2));
            agents.forgotten(Map.of("node-c", t1));                         // ForgetNode of c
            agents.forgotten(Map.of("node-a", t1));                         // a tick's union read before it
            assertEquals(Map.of("node-a", t1, "node-c", t1), agents.forgotten());
            agents.forgotten(Map.of());                                     // a tick whose listings all failed
            assertEquals(Map.of("node-a", t1, "node-c", t1), agents.forgotten());
        }
    }
}
