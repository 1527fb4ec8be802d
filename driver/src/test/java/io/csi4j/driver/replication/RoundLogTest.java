package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

class RoundLogTest {
    private static final Instant CUT = Instant.parse("2026-11-27T00:00:00Z");

    static Stream<Arguments> lags() {
        return Stream.of(
                Arguments.of("just cut", CUT, Duration.ZERO),
                Arguments.of("30 s later", CUT.plusSeconds(30), Duration.ofSeconds(30)),
                Arguments.of("sub-second", CUT.plusMillis(250), Duration.ofMillis(250)),
                Arguments.of("clock went back", CUT.minusSeconds(5), Duration.ZERO));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("lags")
    void lagIsNowMinusTheCutOfThePointHeld(String name, Instant now, Duration lag) {
        var round = new RoundLog.Round(CUT, CUT, 10, Duration.ofMillis(5));
        assertEquals(lag, round.lag(now));
    }

    @Test
    void aRoundCannotCompleteBeforeItsCutNorCarryNegativeBytes() {
        assertThrows(IllegalArgumentException.class, () -> new RoundLog.Round(CUT, CUT.minusSeconds(1), 0, Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> new RoundLog.Round(CUT, CUT, -1, Duration.ZERO));
    }

    @Test
    void exportsEachSecondaryHereSortedAndForgetsADeletedOne() {
        var log = new RoundLog("node-\"b\"");
        assertEquals("", log.prometheusText(CUT));
        log.completed("vol-2", new RoundLog.Round(CUT, CUT.plusMillis(1500), 4096, Duration.ofMillis(1500)));
        log.completed("vol-1", new RoundLog.Round(CUT.plusSeconds(10), CUT.plusSeconds(11), 0, Duration.ofSeconds(1)));
        String text = log.prometheusText(CUT.plusSeconds(20));
        String labels2 = "{volume=\"vol-2\",node=\"node-\\\"b\\\"\"}";
        assertTrue(text.contains("# TYPE csi4j_replica_lag_seconds gauge\n"), text);
        assertTrue(text.contains("csi4j_replica_lag_seconds{volume=\"vol-1\",node=\"node-\\\"b\\\"\"} 10.0\n"
                + "csi4j_replica_lag_seconds" + labels2 + " 20.0\n"), text);
        assertTrue(text.contains("csi4j_replica_last_round_bytes" + labels2 + " 4096\n"), text);
        assertTrue(text.contains("csi4j_replica_last_round_seconds" + labels2 + " 1.5\n"), text);
        assertTrue(text.contains("csi4j_replica_last_sync_timestamp_seconds" + labels2 + " "
                + (CUT.getEpochSecond() + 1.5) + "\n"), text);
        log.forget("vol-2");
        String after = log.prometheusText(CUT.plusSeconds(20));
        assertTrue(after.contains("vol-1") && !after.contains("vol-2"), after);
        log.forget("vol-1");
        assertEquals("", log.prometheusText(CUT));
    }
}
