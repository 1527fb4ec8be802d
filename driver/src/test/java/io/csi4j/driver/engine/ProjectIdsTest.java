package io.csi4j.driver.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.OptionalInt;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The project id rule as a table: ids in use (";"-separated, symbolic F = FIRST, L = LAST) to the next one. */
class ProjectIdsTest {
    private static int id(String s) {
        s = s.strip();
        if (s.startsWith("F")) return ProjectIds.FIRST + (s.length() > 1 ? Integer.parseInt(s.substring(1)) : 0);
        if (s.startsWith("L")) return ProjectIds.LAST + (s.length() > 1 ? Integer.parseInt(s.substring(1)) : 0);
        return Integer.parseInt(s);
    }

    @ParameterizedTest(name = "[{0}] -> {1}")
    @CsvSource({
            "'',              F",        // nothing in use: the first of our range
            "'1;2;500',       F",        // administrators' small ids are not ours and not in the way
            "'F',             F+1",
            "'F;F+1;F+2',     F+3",
            "'F;F+5',         F+6",      // after the highest: a freed id (F+1..F+4) is not handed out at once
            "'F+5',           F+6",
            "'F;L',           F+1",      // the top is taken: the lowest gap
            "'F;F+1;F+3;L',   F+2",
            "'L',             F",
            "'L-1',           L",
    })
    void nextId(String used, String expected) {
        TreeSet<Integer> set = Arrays.stream(used.split(";")).filter(s -> !s.isBlank()).map(ProjectIdsTest::id)
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(OptionalInt.of(id(expected)), ProjectIds.next(set));
    }

    @ParameterizedTest(name = "{0} ours: {1}")
    @CsvSource({"0, false", "1, false", "F-1, false", "F, true", "L, true", "L+1, false"})
    void ours(String id, boolean ours) {
        assertEquals(ours, ProjectIds.ours(id(id)));
    }
}
