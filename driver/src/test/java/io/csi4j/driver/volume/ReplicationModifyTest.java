package io.csi4j.driver.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.domain.DomainException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** ControllerModifyVolume of the replication keys (docs/replication.md, "Modify"): the table. */
class ReplicationModifyTest {
    private static final Map<String, String> REPLICATED = Map.of(ReplicationParameters.REPLICAS, "2", ReplicationParameters.INTERVAL, "30s");

    @Test
    void theIntervalOfAReplicatedVolumeMayChange() {
        ReplicationParameters.checkModify(REPLICATED, Map.of(ReplicationParameters.INTERVAL, "5s"));
        ReplicationParameters.checkModify(REPLICATED, Map.of("readAheadKiB", "128"));                  // not this class's keys
        assertEquals(Duration.ofMinutes(90), ReplicationParameters.of(REPLICATED, Map.of(ReplicationParameters.INTERVAL, "1h30m")).interval());
        assertEquals(Duration.ofSeconds(30), ReplicationParameters.of(REPLICATED, Map.of()).interval());
        assertEquals(2, ReplicationParameters.of(REPLICATED, Map.of(ReplicationParameters.INTERVAL, "5s")).replicas());
    }

    @Test
    void badValuesTheReplicaCountAndAnUnreplicatedVolumeAreInvalid() {
        for (var bad : Map.of(
                Map.of(ReplicationParameters.INTERVAL, "4s"), "from 5s to 24h",
                Map.of(ReplicationParameters.INTERVAL, "25h"), "from 5s to 24h",
                Map.of(ReplicationParameters.INTERVAL, "soon"), "must be a duration",
                Map.of(ReplicationParameters.INTERVAL, ""), "must be a duration",
                Map.of(ReplicationParameters.REPLICAS, "3"), "fixed at creation",
                Map.of(ReplicationParameters.REPLICAS, "2"), "fixed at creation").entrySet()) {
            var e = assertThrows(DomainException.class, () -> ReplicationParameters.checkModify(REPLICATED, bad.getKey()));
            assertTrue(e.getMessage().contains(bad.getValue()), bad.getKey() + ": " + e.getMessage());
        }
        var e = assertThrows(DomainException.class, () -> ReplicationParameters.checkModify(Map.of(), Map.of(ReplicationParameters.INTERVAL, "5s")));
        assertTrue(e.getMessage().contains("only to a volume created with"), e.getMessage());
    }
}
