package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** A failed round is tried again after 1 s, doubling with each failure in a row, never later than it would be due. */
class RoundRetryTest {
    @ParameterizedTest(name = "interval {0} s, last round {1} ms, {2} failed in a row: due {3} ms after the last start")
    @CsvSource({
            // none failed: as RoundDeadline always was
            "30, -1, 0, 30000",
            "30, 2500, 0, 26500",
            // a follower whose first round failed (no round done here): 1 s, 2 s, 4 s, ... up to the interval
            "30, -1, 1, 1000",
            "30, -1, 2, 2000",
            "30, -1, 5, 16000",
            "30, -1, 6, 30000",
            "86400, -1, 1, 1000",
            "86400, -1, 17, 65536000",
            "86400, -1, 18, 86400000",
            // after a successful round: never later than the deadline it keeps
            "30, 2500, 3, 4000",
            "30, 2500, 6, 26500",
            "10, 60000, 3, 4000",
            "10, 60000, 4, 5000",
            // failures without end: no overflow, the deadline
            "86400, 120000, 1000, 86279000",
            "5, -1, 2147483647, 5000",
    })
    void aFailedRoundIsRetriedSoonerWithABoundedBackoff(long intervalSeconds, long tookMillis, int failed, long dueMillis) {
        Optional<Duration> took = tookMillis < 0 ? Optional.empty() : Optional.of(Duration.ofMillis(tookMillis));
        assertEquals(Duration.ofMillis(dueMillis), RoundDeadline.waitAfterStart(Duration.ofSeconds(intervalSeconds), took, failed));
    }
}
