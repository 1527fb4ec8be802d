package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

    @Test
    void aDurableLogGivesTheLastRoundsBackAfterARestartAndForgetsADeletedOne(@TempDir Path dir) throws Exception {
        var round = new RoundLog.Round(CUT, CUT.plusMillis(1500), 4096, Duration.ofMillis(1234));
        var log = new RoundLog("node-b", dir);
        log.completed("vol-1", new RoundLog.Round(CUT.minusSeconds(60), CUT.minusSeconds(59), 1, Duration.ofSeconds(1)));
        log.completed("vol-1", round);                        // the last one counts
        log.completed("vol-2", round);
        assertTrue(Files.exists(dir.resolve("vol-1.round")), "written before completed returns");
        assertEquals(java.util.List.of("vol-1.round", "vol-2.round"),
                Files.list(dir).map(p -> p.getFileName().toString()).sorted().toList(), "no temporary file left");

        var restarted = new RoundLog("node-b", dir);
        assertEquals(java.util.Optional.of(round), restarted.last("vol-1"));
        assertEquals(log.prometheusText(CUT.plusSeconds(30)), restarted.prometheusText(CUT.plusSeconds(30)));
        restarted.forget("vol-2");
        assertTrue(Files.notExists(dir.resolve("vol-2.round")));
        assertEquals(java.util.Optional.empty(), new RoundLog("node-b", dir).last("vol-2"));
    }

    @Test
    void aFileThatIsNotARoundIsLeftOutAndOtherFilesAreNotRead(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("vol-1.round"), "{\"cutAt\":\"yesterday\"}\n");
        Files.writeString(dir.resolve("vol-2.json"), "{\"epoch\":\"1\"}\n");   // a replica state beside
        var log = new RoundLog("node-b", dir);
        assertEquals(java.util.Optional.empty(), log.last("vol-1"));
        assertEquals(java.util.Optional.empty(), log.last("vol-2"));
        assertEquals("", log.prometheusText(CUT));
        assertThrows(IllegalArgumentException.class, () -> log.completed("../x", new RoundLog.Round(CUT, CUT, 0, Duration.ZERO)));
    }
}
