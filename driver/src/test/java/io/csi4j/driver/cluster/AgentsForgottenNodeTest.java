package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ReplicatedVolumeId;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@link Agents#forgottenNode}: the one answer to "is the node this id's tag names forgotten", for an ordinary id's tag
 * (Owners: a delete of its volume is done) and a replica's (Replicas: never asked, routed to or failed over to).
 */
class AgentsForgottenNodeTest {
    private static final String LONG = "a-node-whose-name-is-long-enough-that-three-of-them-do-not-fit.example.internal";

    @Test
    void aTagNamesItsForgottenNodePlainOrHashedAndNoOtherNode() {
        try (var agents = new Agents(List.of(), null, Duration.ofSeconds(5), Duration.ofMinutes(10))) {
            assertEquals(Optional.empty(), agents.forgottenNode("node-a"));        // no marks known yet
            agents.forgotten(Map.of("node-a", Instant.ofEpochSecond(1_000), "Node_B", Instant.ofEpochSecond(1_000),
                    LONG, Instant.ofEpochSecond(1_000)));
            assertEquals(Optional.of("node-a"), agents.forgottenNode("node-a"));
            assertEquals(Optional.of("node-a"), agents.forgottenNode(ObjectId.hashedTag("node-a")));
            assertEquals(Optional.of("Node_B"), agents.forgottenNode(ObjectId.nodeTag("Node_B")));   // not a DNS name: hashed
            assertEquals(Optional.empty(), agents.forgottenNode("node-b"));
            assertEquals(Optional.empty(), agents.forgottenNode("node-a.x"));
            assertEquals(Optional.empty(), agents.forgottenNode(ObjectId.hashedTag("node-c")));

            // an ordinary id's tag, as Owners asks
            var volume = ObjectId.generate(ObjectId.Kind.VOLUME, "node-a");
            assertEquals(Optional.of("node-a"), agents.forgottenNode(volume.nodeTag()));

            // a replicated id whose tags had to be hashed to fit: each replica's node found from its tag, in order
            var id = ReplicatedVolumeId.generate(List.of(LONG, "node-c", LONG.replace("a-node", "b-node")));
            assertEquals(List.of(Optional.of(LONG), Optional.empty(), Optional.empty()),
                    id.tags().stream().map(agents::forgottenNode).toList(), id.toString());
        }
    }
}
