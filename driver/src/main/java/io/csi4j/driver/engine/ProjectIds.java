package io.csi4j.driver.engine;

import java.util.NavigableSet;
import java.util.OptionalInt;

/**
 * The rule for a directory volume's project id (pure, so it is tested as a table): ids live in
 * [{@link #FIRST}, {@link #LAST}], clear of the small ids an administrator gives by hand in {@code /etc/projid};
 * a new volume gets the id after the highest one in use, so an id freed by a delete is not handed out again at once
 * (a delete is made durable lazily, and a directory a power cut brings back keeps its id until the start-up sweep
 * removes it); past {@link #LAST} the lowest free one. Empty when every id is taken.
 */
final class ProjectIds {
    private ProjectIds() {}

    static final int FIRST = 1 << 20;
    static final int LAST = Integer.MAX_VALUE - 1;

    static OptionalInt next(NavigableSet<Integer> used) {
        NavigableSet<Integer> ours = used.subSet(FIRST, true, LAST, true);
        if (ours.isEmpty()) return OptionalInt.of(FIRST);
        if (ours.last() < LAST) return OptionalInt.of(ours.last() + 1);
        int candidate = FIRST;
        for (int id : ours) {  // only once the top was reached: the first gap
            if (id != candidate) return OptionalInt.of(candidate);
            candidate++;
        }
        return OptionalInt.empty();
    }

    static boolean ours(int id) {
        return id >= FIRST && id <= LAST;
    }
}
