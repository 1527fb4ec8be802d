package io.csi4j.driver.mobility;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.RangeCursor;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link HeldRanges}: one pass held and replayed in order with its total, or nothing past the limit; the cursor closed once. */
class HeldRangesTest {

    /** A cursor over fixed ranges that counts its pulls and closes. */
    static class ListCursor implements RangeCursor {
        final List<Range> ranges;
        int pulled;
        int closed;

        ListCursor(List<Range> ranges) {
            this.ranges = ranges;
        }

        @Override public Range next() { return pulled < ranges.size() ? ranges.get(pulled++) : null; }
        @Override public long capacityBytes() { return 1L << 30; }
        @Override public Method method() { return Method.SHARED_EXTENTS; }
        @Override public void close() { closed++; }
    }

    static List<RangeCursor.Range> ranges(int n, long length) {
        List<RangeCursor.Range> out = new ArrayList<>();
        for (int i = 0; i < n; i++) out.add(new RangeCursor.Range(i * 2 * length, length));
        return out;
    }

    static Stream<Arguments> table() {
        return Stream.of(
                // ranges, limit, held?, total bytes
                Arguments.of(ranges(0, 65536), 4, true, 0L),
                Arguments.of(ranges(1, 65536), 4, true, 65536L),
                Arguments.of(ranges(4, 65536), 4, true, 4 * 65536L),          // exactly the limit: held
                Arguments.of(ranges(5, 65536), 4, false, 0L),                 // one past it: not held
                Arguments.of(ranges(200, 4096), 1000, true, 200 * 4096L),     // grows past the first array
                Arguments.of(List.of(new RangeCursor.Range(0, 3L << 40)), 4, true, 3L << 40),   // longs, not ints
                Arguments.of(ranges(1000, 1), HeldRanges.LIMIT, true, 1000L));
    }

    @ParameterizedTest
    @MethodSource("table")
    void holdsOnePassOrNothing(List<RangeCursor.Range> source, int limit, boolean held, long total) {
        var cursor = new ListCursor(source);
        var result = HeldRanges.hold(cursor, limit);
        assertEquals(held, result.isPresent());
        if (!held) {
            assertEquals(1, cursor.closed, "a cursor not held is closed");
            return;
        }
        HeldRanges h = result.get();
        assertEquals(total, h.totalBytes());
        assertEquals(source.size(), cursor.pulled, "the source walked once, to its end");
        List<RangeCursor.Range> replayed = new ArrayList<>();
        for (RangeCursor.Range r = h.next(); r != null; r = h.next()) replayed.add(r);
        assertEquals(source, replayed);
        assertEquals(null, h.next(), "stays at its end");
        assertEquals(source.size(), cursor.pulled, "the replay does not pull the source again");
        assertEquals(RangeCursor.Method.SHARED_EXTENTS, h.method());
        assertEquals(1L << 30, h.capacityBytes());
        assertEquals(0, cursor.closed);
        h.close();
        assertEquals(1, cursor.closed);
    }

    @Test
    void aFailingCursorIsClosed() {
        var cursor = new ListCursor(List.of()) {
            @Override public Range next() { throw new IllegalStateException("FIEMAP failed"); }
        };
        assertThrows(IllegalStateException.class, () -> HeldRanges.hold(cursor, 4));
        assertTrue(cursor.closed == 1);
    }
}
