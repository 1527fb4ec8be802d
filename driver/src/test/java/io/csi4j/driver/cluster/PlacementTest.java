package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.sdk.CsiException;
import io.grpc.Status;
import java.util.List;

import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The pure rule of placement by capacity. */
class PlacementTest {
    static final long MIB = 1 << 20, GIB = 1L << 30;

    @ParameterizedTest(name = "a={0} MiB b={1} MiB c={2} MiB -> {3}")
    @CsvSource({
            "2048, 1024, 1024, node-a",        // clearly the most
            "1024, 2048, 1024, node-b",
            "1024, 1030, 1000, node-a",        // 6 MiB apart: noise (one disk measured twice), the first id
            "102400, 103000, 50000, node-a",   // 600 MiB of 100 GiB: under 1%
            "102400, 104000, 50000, node-b",   // 1.6 GiB of 100 GiB: over 1%
            "0, 0, 0, node-a",
    })
    void theRoomiestNodeWinsAndNoiseDoesNotDecide(long a, long b, long c, String expected) {
        assertEquals(expected, Placement.roomiest(Map.of("node-a", a * MIB, "node-b", b * MIB, "node-c", c * MIB)));
    }

    @ParameterizedTest(name = "{0} GiB vs {1} GiB")
    @CsvSource({"2, 1", "10, 9"})
    void realDifferencesStillCount(long roomier, long other) {
        assertEquals("node-z", Placement.roomiest(Map.of("node-a", other * GIB, "node-z", roomier * GIB)));
    }

    @ParameterizedTest(name = "primary {0}, {1} replicas -> {2}")
    @CsvSource({
            "node-a, 2, node-c",               // the roomiest of the others
            "node-c, 2, node-b",
            "node-a, 3, node-c node-b",        // roomiest first
            "node-d, 3, node-c node-b",        // the primary's own room does not matter
            "node-b, 3, node-c node-a",        // node-a and node-d: noise, the first id
    })
    void secondariesGoToTheRoomiestOtherNodes(String primary, int replicas, String expected) {
        var room = Map.of("node-a", 1000 * MIB, "node-b", 2000 * MIB, "node-c", 3000 * MIB, "node-d", 1010 * MIB);
        assertEquals(List.of(expected.split(" ")), Placement.secondaries(primary, room, replicas));
    }

    @ParameterizedTest(name = "{0} replicas on {1}")
    @CsvSource({"2, node-a", "3, node-a node-b"})
    void tooFewAnsweringNodesAreResourceExhausted(int replicas, String nodes) {
        var room = new java.util.HashMap<String, Long>();
        for (String n : nodes.split(" ")) room.put(n, GIB);
        var e = assertThrows(CsiException.class, () -> Placement.secondaries("node-a", room, replicas));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.code());
        assertTrue(e.getMessage().contains(replicas + " replicas"), e.getMessage());
    }
}
