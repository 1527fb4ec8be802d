package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PointRetentionTest {

    /** points oldest first; points held by the secondaries; what may be dropped ("-": none). */
    @ParameterizedTest(name = "{0} held {1} -> drop {2}")
    @CsvSource({
            "p1,       -,     -",            // the only point is the newest
            "p1 p2,    p2,    p1",
            "p1 p2,    p1,    -",            // a secondary still on p1: kept
            "p1 p2 p3, p1 p3, p2",
            "p1 p2 p3, p3,    p1 p2",
            "p1 p2 p3, -,     p1 p2",        // nobody holds anything yet: the newest stays
            "p1 p2 p3, p9,    p1 p2",        // a point the primary never had changes nothing
    })
    void onlyPointsNoSecondaryHoldsAreDropped(String points, String held, String expected) {
        assertEquals(list(expected), PointRetention.droppable(list(points), Set.copyOf(list(held))));
    }

    /** The earlier attempt's CI failure: a secondary away for rounds came back to a full copy. */
    @Test
    void aSecondaryAwayForManyRoundsStillFindsItsBase() {
        var primary = new ArrayList<>(List.of("p1"));
        String away = "p1", present = "p1";
        for (int round = 2; round <= 10; round++) {
            primary.add("p" + round);
            present = PointRetention.base(primary, present).orElseThrow();      // a delta every round
            present = "p" + round;
            primary.removeAll(PointRetention.droppable(primary, Set.of(away, present)));
        }
        assertEquals(List.of("p1", "p10"), primary);
        assertEquals(Optional.of("p1"), PointRetention.base(primary, away), "the returning secondary pulls a delta");
    }

    @Test
    void aFullCopyOnlyWithoutAHeldPointThePrimaryHas() {
        assertEquals(Optional.empty(), PointRetention.base(List.of("p1"), ""));
        assertEquals(Optional.empty(), PointRetention.base(List.of("p1"), "q7"));
        assertEquals(Optional.of("p1"), PointRetention.base(List.of("p1", "p2"), "p1"));
    }

    private static List<String> list(String spaced) {
        return spaced == null || spaced.equals("-") ? List.of() : List.of(spaced.trim().split("\\s+"));
    }
}
