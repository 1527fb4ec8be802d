package io.csi4j.driver.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.domain.DomainException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * CreateVolume's mutable_parameters (a VolumeAttributesClass named at creation) and the replication keys: the interval
 * is accepted and takes precedence over the StorageClass's, the replica count is refused; the engine's keys pass through.
 */
class ReplicationCreateMutableTest {

    @ParameterizedTest(name = "replicas={0} interval={1}, mutable {2} -> {3}")
    @CsvSource(nullValues = "-", delimiter = '|', value = {
            // replicas | StorageClass interval | mutable_parameters | the interval in effect, or the error
            "2 | 1h  | csi4j.io/replication-interval=5s                  | PT5S",
            "3 | -   | csi4j.io/replication-interval=1h30m               | PT1H30M",
            "2 | 30s | readAheadKiB=128                                  | PT30S",
            "2 | 30s | csi4j.io/replication-interval=10s,readAheadKiB=128 | PT10S",
            "2 | 30s | csi4j.io/replication-interval=4s                  | from 5s to 24h",
            "2 | 30s | csi4j.io/replication-interval=soon                | must be a duration",
            "2 | 30s | csi4j.io/replicas=2                               | is not a mutable parameter",
            "2 | 30s | csi4j.io/replicas=3                               | is not a mutable parameter",
            "- | -   | csi4j.io/replication-interval=5s                  | only to a volume created with",
            "1 | -   | csi4j.io/replicas=1                               | is not a mutable parameter",
    })
    void theIntervalMayBeGivenAtCreationTheCountMayNot(String replicas, String interval, String mutable, String expected) {
        Map<String, String> parameters = new HashMap<>();
        if (replicas != null) parameters.put(ReplicationParameters.REPLICAS, replicas);
        if (interval != null) parameters.put(ReplicationParameters.INTERVAL, interval);
        Map<String, String> mutableParameters = new HashMap<>();
        for (String pair : mutable.split(",")) mutableParameters.put(pair.substring(0, pair.indexOf('=')), pair.substring(pair.indexOf('=') + 1));
        if (expected.startsWith("PT")) {
            var engineKeys = ReplicationParameters.checkCreate(parameters, mutableParameters);
            assertEquals(Duration.parse(expected), ReplicationParameters.of(parameters, mutableParameters).interval());
            var withoutInterval = new HashMap<>(mutableParameters);
            withoutInterval.remove(ReplicationParameters.INTERVAL);
            assertEquals(withoutInterval, engineKeys, "the engine gets every key but the interval");
        } else {
            var e = assertThrows(DomainException.class, () -> ReplicationParameters.checkCreate(parameters, mutableParameters));
            assertTrue(e.getMessage().contains(expected), e.getMessage());
        }
    }
}
