package io.csi4j.driver.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.PoolChoice.Directory;
import io.csi4j.driver.engine.PoolChoice.Facts;
import io.csi4j.driver.engine.PoolChoice.Image;
import java.util.OptionalLong;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/** The default pool rule, table-driven: no root, no kernel. */
class PoolChoiceTest {
    private static final long GIB = 1L << 30;

    static Stream<Arguments> rows() {
        PoolReserve none = PoolReserve.bytes(0), tenth = PoolReserve.DEFAULT;
        return Stream.of(
                // image (bytes)            fs       reflinks entries free, total (of the fs)   reserve -> expected pool size (empty = directory)
                Arguments.of(OptionalLong.of(20 * GIB), "ext4", false, false, 80 * GIB, 100 * GIB, tenth, OptionalLong.of(20 * GIB)),   // restart adopts
                Arguments.of(OptionalLong.of(512L << 20), "ext4", false, true, 1L << 20, 100 * GIB, tenth, OptionalLong.of(512L << 20)), // adopts even when full
                Arguments.of(OptionalLong.empty(), "xfs", true, false, 80 * GIB, 100 * GIB, tenth, OptionalLong.empty()),            // xfs reflink: directory
                Arguments.of(OptionalLong.empty(), "btrfs", true, true, 1L << 20, 100 * GIB, tenth, OptionalLong.empty()),           // btrfs: directory
                Arguments.of(OptionalLong.empty(), "ext4", false, true, 80 * GIB, 100 * GIB, tenth, OptionalLong.empty()),           // an earlier directory pool stays
                Arguments.of(OptionalLong.empty(), "ext4", false, false, 80 * GIB + 123, 100 * GIB, tenth, OptionalLong.of(70 * GIB)), // free less 10% of the fs, whole GiB
                Arguments.of(OptionalLong.empty(), "ext4", false, false, 80 * GIB + 123, 100 * GIB, none, OptionalLong.of(80 * GIB)), // no reserve: all the free space
                Arguments.of(OptionalLong.empty(), "ext4", false, false, 80 * GIB, 100 * GIB, PoolReserve.bytes(5 * GIB + 1), OptionalLong.of(74 * GIB)), // a size
                Arguments.of(OptionalLong.empty(), "ext4", false, false, 2 * GIB, 10 * GIB, tenth, OptionalLong.of(GIB)),           // the smallest made
                Arguments.of(OptionalLong.empty(), "tmpfs", false, false, 4 * GIB - 1, 10 * GIB, tenth, OptionalLong.of(2 * GIB)));
    }

    @ParameterizedTest
    @MethodSource("rows")
    void decides(OptionalLong image, String fs, boolean reflinks, boolean entries, long free, long total, PoolReserve reserve,
                 OptionalLong expected) {
        PoolChoice.Choice choice = PoolChoice.decide(new Facts(image, fs, reflinks, entries, free, total), reserve);
        assertEquals(expected, choice.poolSize(), choice.toString());
        if (expected.isPresent()) assertInstanceOf(Image.class, choice);
        else assertInstanceOf(Directory.class, choice);
        assertTrue(!choice.reason().isBlank());
    }

    @Test
    void tooLittleSpaceForAPoolOfItsOwnIsRefusedWithTheWayOut() {
        var refused = assertThrows(PoolChoice.Refused.class,
                () -> PoolChoice.decide(new Facts(OptionalLong.empty(), "ext4", false, false, GIB - 1, 10 * GIB), PoolReserve.bytes(0)));
        assertTrue(refused.getMessage().contains("--pool-size 0"), refused.getMessage());
        assertTrue(refused.getMessage().contains("--pool-size SIZE"), refused.getMessage());
        // free space the reserve takes is not there for a pool
        var reserved = assertThrows(PoolChoice.Refused.class,
                () -> PoolChoice.decide(new Facts(OptionalLong.empty(), "ext4", false, false, 2 * GIB - 1, 10 * GIB), PoolReserve.DEFAULT));
        assertTrue(reserved.getMessage().contains("2.0 GiB free"), reserved.getMessage());
        assertTrue(reserved.getMessage().contains("1 GiB of it kept free (--pool-reserve 10%)"), reserved.getMessage());
    }
}
