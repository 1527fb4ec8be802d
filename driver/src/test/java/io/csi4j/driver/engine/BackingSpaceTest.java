package io.csi4j.driver.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.storage.ByteUnits;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The thin pool image's rules on one reading, table-driven: no root, no kernel. Sizes in MiB. */
class BackingSpaceTest {
    private static final long M = 1L << 20;

    static Stream<Arguments> rows() {
        return Stream.of(
                // backing free, reserve, image size, image allocated, pool total, pool free, provisioned
                //   -> slack, claimable, backed available, allocatable (ratio 1), overcommitted
                // a fresh auto pool (image = free - reserve; pool total = image - its 24 MiB log): everything shown is backed
                Arguments.of(1800, 150, 1024, 44, 1000, 980, 0, 0, 980, 980, 980, false),
                // another writer took 800 MiB: the pool shows 980 free but only 1000 - 150 are backed
                Arguments.of(1000, 150, 1024, 44, 1000, 980, 0, 0, 980, 850, 850, false),
                // the reserve is eaten: the image may still claim 980, the disk holds 500: overcommitted, nothing promised
                Arguments.of(500, 150, 1024, 44, 1000, 980, 900, 0, 980, 350, 0, true),
                // full beneath, but most of the pool's free space lies on blocks the image holds already (deleted volumes)
                Arguments.of(0, 150, 1024, 900, 1000, 900, 0, 776, 124, 776, 776, true),
                // a pool whose free space is all slack cannot be overcommitted, however full the disk
                Arguments.of(0, 150, 1024, 1024, 1000, 900, 0, 900, 0, 900, 900, false),
                // volumes promised 600 of 1000: a new one gets what is left of the backed total
                Arguments.of(1800, 150, 1024, 424, 1000, 600, 600, 0, 600, 600, 400, false));
    }

    @ParameterizedTest
    @MethodSource("rows")
    void rules(long backing, long reserve, long image, long allocated, long poolTotal, long poolFree, long provisioned,
               long slack, long claimable, long backedAvailable, long allocatable, boolean overcommitted) {
        var s = new BackingSpace(Path.of("/var/lib/csi4j"), backing * M, reserve * M, image * M, allocated * M, poolTotal * M, poolFree * M);
        assertEquals(slack * M, s.slack(), "slack");
        assertEquals(claimable * M, s.claimable(), "claimable");
        assertEquals(backedAvailable * M, s.backedAvailable(), "backed available");
        assertEquals(allocatable * M, s.allocatable(provisioned * M, 1.0), "allocatable");
        assertEquals(overcommitted, s.overcommitted(), "overcommitted");
        assertEquals(overcommitted, s.condition().isPresent());
    }

    @Test
    void theConditionAndTheRefusalSayWhyAndWhatToDoInHumanUnits() {
        var s = new BackingSpace(Path.of("/var/lib/csi4j"), 500 * M, 150 * M, 1024 * M, 44 * M, 1000 * M, 980 * M);
        String condition = s.condition().orElseThrow();
        assertTrue(condition.contains("/var/lib/csi4j has 500 MiB free, less than the 980 MiB"), condition);
        assertTrue(condition.contains("EIO") && condition.contains("free space on /var/lib/csi4j"), condition);
        String refusal = s.refusal(256 * M, 0);
        assertEquals("256 MiB asked, 0 B can be promised: the pool image's backing filesystem /var/lib/csi4j has 500 MiB free "
                + "and 150 MiB of it is kept free, and the pool already cannot hold what its volumes may write (980 MiB)", refusal);
    }

    @Test
    void humanUnits() {
        assertEquals("512 B", ByteUnits.human(512));
        assertEquals("1 KiB", ByteUnits.human(1024));
        assertEquals("1.5 GiB", ByteUnits.human(3L << 29));
        assertEquals("954 MiB", ByteUnits.human(1_000_000_000));
        assertEquals("8 EiB", ByteUnits.human(Long.MAX_VALUE));
    }
}
