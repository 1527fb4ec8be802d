package io.csi4j.cli;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class ByteSizeTest {
    @Test
    void parsesKubernetesQuantities() {
        assertEquals(512, ByteSize.parse("512"));
        assertEquals(64L << 20, ByteSize.parse("64Mi"));
        assertEquals(10L << 30, ByteSize.parse("10Gi"));
        assertEquals(1_000_000_000L, ByteSize.parse("1G"));
        assertEquals(1_500_000_000L, ByteSize.parse("1.5G"));
        assertEquals(1L << 40, ByteSize.parse("1TiB"));
    }

    @Test
    void refusesGarbage() {
        for (String bad : new String[] {"", "-1", "ten", "10Xi", "1e9"}) {
            assertThrows(IllegalArgumentException.class, () -> ByteSize.parse(bad), bad);
        }
    }

    @Test
    void formatsExactBinaryUnits() {
        assertEquals("10Gi", ByteSize.format(10L << 30));
        assertEquals("1000", ByteSize.format(1000));
        assertEquals("1536Ki", ByteSize.format(1536L << 10));
    }
}
