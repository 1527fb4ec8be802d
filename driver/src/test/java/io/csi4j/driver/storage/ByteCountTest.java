package io.csi4j.driver.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ByteCountTest {
    @Test
    void describesCountsInBinaryUnitsWithTheExactCountBeside() {
        Object[][] table = {
                {0L, "0 bytes"},
                {1023L, "1023 bytes"},
                {1024L, "1Ki (1024 bytes)"},
                {64L << 20, "64Mi (67108864 bytes)"},
                {1_000_000_000L, "953.7Mi (1000000000 bytes)"},
                {81_470_160_896L, "75.9Gi (81470160896 bytes)"},
                {1L << 60, "1Ei (1152921504606846976 bytes)"},
                {Long.MAX_VALUE, "8.0Ei (9223372036854775807 bytes)"},
        };
        for (Object[] row : table) assertEquals(row[1], ByteCount.describe((Long) row[0]), row[0].toString());
    }
}
