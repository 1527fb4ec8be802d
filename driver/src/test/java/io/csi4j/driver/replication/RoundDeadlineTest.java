package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RoundDeadlineTest {
    @ParameterizedTest(name = "interval {0} s, last round {1} ms: due {2} ms after its start")
    @CsvSource({
            // no round here yet: the whole interval
            "30, -1, 30000",
            // the usual case: the round's time and the tick come off the interval
            "30, 2500, 26500",
            "10, 3400, 5600",
            "5, 0, 4000",
            // never sooner than half the interval, however long the last round took
            "10, 4500, 5000",
            "10, 60000, 5000",
            "5, 3000, 2500",
            "86400, 120000, 86279000",
    })
    void theNextRoundStartsSoThatThePointHeldStaysWithinTheInterval(long intervalSeconds, long tookMillis, long dueMillis) {
        Optional<Duration> took = tookMillis < 0 ? Optional.empty() : Optional.of(Duration.ofMillis(tookMillis));
        assertEquals(Duration.ofMillis(dueMillis), RoundDeadline.waitAfterStart(Duration.ofSeconds(intervalSeconds), took));
    }
}
