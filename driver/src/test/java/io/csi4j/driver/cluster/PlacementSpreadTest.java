package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.volume.ReplicationParameters;
import io.csi4j.sdk.CsiException;
import io.grpc.Status;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Where the replicas go under {@code csi4j.io/replica-spread-key}: the pure rule, the parameter and the segments. */
class PlacementSpreadTest {
    static final long MIB = 1 << 20;
    static final Placement.Spread ZONE = new Placement.Spread("topology.kubernetes.io/zone");

    /** a: zone-1 (1000 MiB), b: zone-1 (3000), c: zone-2 (2000), d: zone-3 (1500), e: no zone (9000). */
    static final Map<String, Long> ROOM = Map.of("a", 1000 * MIB, "b", 3000 * MIB, "c", 2000 * MIB, "d", 1500 * MIB, "e", 9000 * MIB);
    static final Map<String, String> ZONES = Map.of("a", "zone-1", "b", "zone-1", "c", "zone-2", "d", "zone-3");

    @ParameterizedTest(name = "primary {0}, also on {1}, {2} replicas -> {3}")
    @CsvSource(nullValues = "-", value = {
            "a, -, 2, c",          // b is roomier but in the primary's zone; e is roomiest but has no zone
            "c, -, 2, b",          // the roomiest of zone-1
            "a, -, 3, c d",        // one per zone, roomiest first
            "c, -, 3, b d",
            "a, d, 3, d c",        // the requisite topology's node first, then the other zone
            "c, a, 2, a",
    })
    void everyReplicaInADifferentZone(String primary, String alsoOn, int replicas, String expected) {
        assertEquals(List.of(expected.split(" ")), Placement.secondaries(primary, alsoOn, ROOM, ZONES, ZONE, replicas));
    }

    @ParameterizedTest(name = "primary {0}, also on {1}, {2} replicas: {3}")
    @CsvSource(nullValues = "-", value = {
            "e, -, 2, 'node e, where the primary goes, has no value of topology.kubernetes.io/zone'",
            "a, e, 2, 'node e, which the requisite topology names, has no value'",
            "a, b, 2, 'node b, which the requisite topology names, has the value zone-1 of the primary'",
            "a, c, 3, '3 replicas need 3 distinct values of topology.kubernetes.io/zone'",
    })
    void whatCannotSpreadIsResourceExhausted(String primary, String alsoOn, int replicas, String message) {
        Map<String, Long> room = new HashMap<>(ROOM);
        room.remove("d");                                   // only zone-1 and zone-2 answer
        var e = assertThrows(CsiException.class, () -> Placement.secondaries(primary, alsoOn, room, ZONES, ZONE, replicas));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.code());
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }

    @Test
    void tooFewZonesNamesEveryNodesValue() {
        var e = assertThrows(CsiException.class, () -> Placement.secondaries("a", null, Map.of("a", MIB, "b", MIB, "e", MIB),
                ZONES, ZONE, 2));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.code());
        assertTrue(e.getMessage().contains("they have [zone-1] (node: value {a=zone-1, b=zone-1}"), e.getMessage());
    }

    @Test
    void withoutASpreadKeyEveryNodeIsItsOwnValue() {
        var own = Map.of("a", "a", "b", "b", "c", "c", "d", "d", "e", "e");
        assertEquals(List.of("d", "e"), Placement.secondaries("a", "d", ROOM, own, Placement.Spread.NONE, 3));
        assertEquals(List.of("e", "b"), Placement.secondaries("a", ROOM, 3));
    }

    @ParameterizedTest(name = "{0}={1}: {2}")
    @CsvSource(nullValues = "-", value = {
            "csi4j.io/replicas, 2, topology.kubernetes.io/zone, -",
            "csi4j.io/replicas, 3, zone, -",
            "csi4j.io/replicas, 1, topology.kubernetes.io/zone, applies only with csi4j.io/replicas of 2 or 3",
            "-, -, topology.kubernetes.io/zone, applies only with csi4j.io/replicas of 2 or 3",
            "csi4j.io/replicas, 2, Bad_Prefix/zone, must be a topology key",
            "csi4j.io/replicas, 2, '', must be a topology key",
            "csi4j.io/replicas, 2, a/b/c, must be a topology key",
    })
    void theParameterIsATopologyKeyWithReplicas(String replicasKey, String replicas, String key, String error) {
        Map<String, String> parameters = new HashMap<>();
        if (replicasKey != null) parameters.put(replicasKey, replicas);
        parameters.put(ReplicationParameters.SPREAD_KEY, key);
        if (error == null) {
            assertEquals(key, ReplicationParameters.spreadKey(parameters).orElseThrow());
            ReplicationParameters.of(parameters);
        } else {
            var e = assertThrows(DomainException.class, () -> ReplicationParameters.of(parameters));
            assertTrue(e.getMessage().contains(error), e.getMessage());
        }
    }

    @Test
    void theAgentsManifestCarriesItsSegments() {
        var manifest = Map.of("node", "n1", "engine", "image", DriverConfig.TOPOLOGY_MANIFEST_PREFIX + "topology.kubernetes.io/zone", "zone-1");
        assertEquals(Map.of("topology.kubernetes.io/zone", "zone-1"), Agent.segments(manifest));
        assertEquals(Map.of(), Agent.segments(Map.of("node", "n1")));
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({
            "topology.csi4j.io/node, n2",          // the node's own key is not an extra segment
            "topology.kubernetes.io/zone, -bad",
            "Topology.K8s.io/zone, a",
            "topology.kubernetes.io/zone, ''",
    })
    void badSegmentsAreRefused(String key, String value) {
        assertThrows(IllegalArgumentException.class, () -> DriverConfig.checkTopology(Map.of(key, value)));
    }
}
