package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.csi4j.driver.engine.RangeCursor.Range;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A two-pass cut's delta is both passes' ranges joined ({@link CutDeltas#union}): ascending, overlapping or touching
 * ranges as one, nothing lost; null past {@link CutDeltas#MAX_RANGES} or when a pass kept none.
 */
class CutDeltasUnionTest {
    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("both empty", "", "", ""),
                Arguments.of("one empty", "0+4096", "", "0+4096"),
                Arguments.of("disjoint, interleaved", "0+4096 16384+4096", "8192+4096 32768+4096", "0+4096 8192+4096 16384+4096 32768+4096"),
                Arguments.of("touching: one range", "0+4096", "4096+4096", "0+8192"),
                Arguments.of("overlapping", "0+8192", "4096+8192", "0+12288"),
                Arguments.of("one inside the other", "0+65536", "8192+4096", "0+65536"),
                Arguments.of("the same range twice", "4096+4096", "4096+4096", "4096+4096"),
                Arguments.of("one bridging two", "0+4096 8192+4096", "4096+4096", "0+12288"),
                Arguments.of("a gap of one block stays", "0+4096", "8192+4096", "0+4096 8192+4096"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void joinsBothPassesRanges(String name, String first, String second, String union) {
        assertEquals(ranges(union), CutDeltas.union(ranges(first), ranges(second)));
        assertEquals(ranges(union), CutDeltas.union(ranges(second), ranges(first)), "whichever pass comes first");
    }

    @Test
    void nothingWhenAPassKeptNoneOrTheUnionIsPastTheCap() {
        assertNull(CutDeltas.union(null, List.of()));
        assertNull(CutDeltas.union(List.of(), null));
        List<Range> even = new ArrayList<>();
        List<Range> odd = new ArrayList<>();
        for (int i = 0; i <= CutDeltas.MAX_RANGES; i++) (i % 2 == 0 ? even : odd).add(new Range(i * 8192L, 4096));
        assertNull(CutDeltas.union(even, odd), "past MAX_RANGES: nothing kept");
        assertEquals(CutDeltas.MAX_RANGES, CutDeltas.union(even.subList(0, even.size() - 1), odd).size(), "at the cap: kept");
    }

    private static List<Range> ranges(String text) {
        if (text.isEmpty()) return List.of();
        return Stream.of(text.split(" ")).map(r -> r.split("\\+")).map(p -> new Range(Long.parseLong(p[0]), Long.parseLong(p[1]))).toList();
    }
}
