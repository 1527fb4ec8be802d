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

    @Test
    void decimalUnitsEarnANoteBinaryOnesDoNot() {
        String[][] table = {
                {"1GB", "1GB means 1000000000 bytes (953.7Mi), a decimal unit; write 1Gi for 1073741824 bytes"},
                {"1G", "1G means 1000000000 bytes (953.7Mi), a decimal unit; write 1Gi for 1073741824 bytes"},
                {"1.5G", "1.5G means 1500000000 bytes (1.4Gi), a decimal unit; write 1.5Gi for 1610612736 bytes"},
                {"10k", "10k means 10000 bytes (9.8Ki), a decimal unit; write 10Ki for 10240 bytes"},
                {"9E", "9E means 9000000000000000000 bytes (7.8Ei), a decimal unit"},
                {"1Gi", null}, {"1GiB", null}, {"512", null}, {"512B", null}};
        for (String[] row : table) {
            assertEquals(java.util.Optional.ofNullable(row[1]), ByteSize.decimalNote(row[0]), row[0]);
        }
    }
}
