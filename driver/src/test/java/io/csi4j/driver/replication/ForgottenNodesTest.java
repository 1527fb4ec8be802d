package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.domain.DomainException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An agent's durable marks of forgotten nodes ({@link ForgottenNodes}): kept across a restart, first time kept, checked. */
class ForgottenNodesTest {
    @TempDir
    Path dir;

    @Test
    void marksAreDurableAndKeepTheirFirstTime() throws Exception {
        var states = new ReplicaStates(dir);
        Instant first = Instant.ofEpochSecond(1_800_000_000L);
        assertEquals(Map.of(), states.forgottenNodes().all());
        states.forgottenNodes().forget("node-c", first, "node-a");
        states.forgottenNodes().forget("node-c", first.plusSeconds(60), "node-a");   // a retry, or the scheduler telling it again
        states.forgottenNodes().forget("node-d", first.plusSeconds(5), "node-a");
        var reopened = new ReplicaStates(dir);                                      // the agent restarted
        assertEquals(Map.of("node-c", first, "node-d", first.plusSeconds(5)), reopened.forgottenNodes().all());
        assertEquals(java.util.List.of(), reopened.ids(), "not a replica's state");
        assertEquals(Map.of(), reopened.tombstones(), "not a tombstone");
        try (var files = Files.list(dir)) {
            assertEquals(java.util.List.of(ForgottenNodes.FILE), files.map(p -> p.getFileName().toString()).toList(), "no temporary left");
        }
    }

    @Test
    void refusesItsOwnNodeAndBadIds() {
        var forgotten = new ReplicaStates(dir).forgottenNodes();
        var self = assertThrows(DomainException.class, () -> forgotten.forget("node-a", Instant.now(), "node-a"));
        assertEquals(DomainException.Kind.PRECONDITION, self.kind());
        assertTrue(self.getMessage().contains("node 'node-a'"), self.getMessage());
        assertEquals(DomainException.Kind.INVALID, assertThrows(DomainException.class, () -> forgotten.forget("", Instant.now(), "a")).kind());
        assertEquals(DomainException.Kind.INVALID, assertThrows(DomainException.class,
                () -> forgotten.forget("x\n", Instant.now(), "a")).kind());
        assertEquals(DomainException.Kind.INVALID, assertThrows(DomainException.class,
                () -> forgotten.forget("n".repeat(257), Instant.now(), "a")).kind());
        assertEquals(Map.of(), forgotten.all());
    }

    @Test
    void aDamagedFileFailsLoudlyInsteadOfForgettingTheMarks() throws Exception {
        Files.writeString(dir.resolve(ForgottenNodes.FILE), "{\"node-c\":");
        var e = assertThrows(DomainException.class, () -> new ReplicaStates(dir).forgottenNodes().all());
        assertEquals(DomainException.Kind.FAILED, e.kind());
    }
}
