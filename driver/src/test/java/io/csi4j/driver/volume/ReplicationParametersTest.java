package io.csi4j.driver.volume;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.domain.DomainException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ReplicationParametersTest {

    /** replicas, interval (empty: absent) -> replicas and interval in seconds. */
    @ParameterizedTest
    @CsvSource(nullValues = "-", value = {
            "-, -, 1, 30",
            "1, -, 1, 30",
            "2, -, 2, 30",
            "3, -, 3, 30",
            "2, 5s, 2, 5",
            "2, 30s, 2, 30",
            "3, 90s, 3, 90",
            "2, 5m, 2, 300",
            "2, 1h30m, 2, 5400",
            "2, 1m5s, 2, 65",
            "2, 24h, 2, 86400",
            "2, 0h0m10s, 2, 10",
    })
    void accepted(String replicas, String interval, int expectedReplicas, long expectedSeconds) {
        var p = ReplicationParameters.of(parameters(replicas, interval));
        assertEquals(expectedReplicas, p.replicas());
        assertEquals(Duration.ofSeconds(expectedSeconds), p.interval());
        assertEquals(expectedReplicas > 1, p.replicated());
    }

    /** Each is INVALID, and the message names the parameter and the bad value. */
    @ParameterizedTest
    @CsvSource(nullValues = "-", value = {
            "0, -, csi4j.io/replicas",
            "4, -, csi4j.io/replicas",
            "-1, -, csi4j.io/replicas",
            "two, -, csi4j.io/replicas",
            "'', -, csi4j.io/replicas",
            "' 2', -, csi4j.io/replicas",
            "02, -, csi4j.io/replicas",
            "2, 4s, 'from 5s to 24h'",
            "2, 0s, 'from 5s to 24h'",
            "2, 24h1s, 'from 5s to 24h'",
            "2, 25h, 'from 5s to 24h'",
            "2, 99999999999s, csi4j.io/replication-interval",
            "2, 30, 'a duration such as'",
            "2, '', 'a duration such as'",
            "2, 30S, 'a duration such as'",
            "2, 1d, 'a duration such as'",
            "2, -30s, 'a duration such as'",
            "2, 30s5m, 'a duration such as'",
            "2, PT30S, 'a duration such as'",
            "1, 30s, 'only with'",
            "-, 30s, 'only with'",
    })
    void refused(String replicas, String interval, String inMessage) {
        var e = assertThrows(DomainException.class, () -> ReplicationParameters.of(parameters(replicas, interval)));
        assertEquals(DomainException.Kind.INVALID, e.kind());
        assertTrue(e.getMessage().contains(inMessage), e.getMessage());
    }

    private static Map<String, String> parameters(String replicas, String interval) {
        var map = new HashMap<String, String>();
        map.put("csi4j.io/volume-group", "ignored here");
        if (replicas != null) map.put(ReplicationParameters.REPLICAS, replicas);
        if (interval != null) map.put(ReplicationParameters.INTERVAL, interval);
        return map;
    }
}
