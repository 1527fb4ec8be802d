package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
}
