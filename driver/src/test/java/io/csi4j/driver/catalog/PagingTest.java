package io.csi4j.driver.catalog;

import io.csi4j.driver.model.Page;
import io.csi4j.driver.model.SnapshotFilter;
import io.csi4j.driver.model.VolumeRecord;

import static io.csi4j.driver.catalog.CatalogTablesTest.ids;
import static io.csi4j.driver.catalog.Samples.volume;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.BiFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PagingTest {
    @TempDir
    Path dir;

    private Catalog catalog;

    @BeforeEach
    void open() {
        catalog = Catalog.openIn(dir);
    }

    @AfterEach
    void close() {
        catalog.close();
    }

    @Test
    void everyLimitCoversEveryRowExactlyOnceInOrder() {
        int n = 37;
        List<String> expected = new ArrayList<>();
        catalog.inTransaction(tx -> {
            for (int i = 0; i < n; i++) {
                tx.volumes().insert(volume("v" + i));
                expected.add("v" + i);
            }
            return null;
        });
        for (int limit = 1; limit <= n + 1; limit++) {
            List<String> seen = new ArrayList<>();
            int pages = 0;
            long after = 0;
            while (true) {
                Page<VolumeRecord> page = catalog.volumes().page(after, limit);
                pages++;
                assertTrue(page.items().size() <= limit);
                seen.addAll(ids(page.items()));
                if (!page.more()) break;
                assertEquals(limit, page.items().size(), "only the last page may be short");
                after = page.lastSeq();
            }
            assertEquals(expected, seen, "limit " + limit);
            assertEquals((n + limit - 1) / limit, pages, "no empty trailing page, limit " + limit);
        }
    }

    @Test
    void emptyTableAndBadLimits() {
        Page<VolumeRecord> page = catalog.volumes().page(0, 10);
        assertEquals(List.of(), page.items());
        assertEquals(0, page.lastSeq());
        assertFalse(page.more());
        assertEquals(new Page<>(List.of(), 12345, false), catalog.volumes().page(12345, 10));
        assertThrows(IllegalArgumentException.class, () -> catalog.volumes().page(0, 0));
        assertThrows(IllegalArgumentException.class, () -> catalog.volumes().page(0, -1));
        catalog.volumes().insert(volume("v"));
        assertEquals(1, catalog.volumes().page(0, Integer.MAX_VALUE).items().size());
    }

    @Test
    void toleratesInsertsAndDeletesBetweenPages() {
        Random random = new Random(7);
        Set<String> live = new LinkedHashSet<>();
        for (int i = 0; i < 60; i++) {
            catalog.volumes().insert(volume("old" + i));
            live.add("old" + i);
        }
        Set<String> untouched = new HashSet<>(live);  // there from start to end: must all be seen
        Set<String> insertedDuring = new HashSet<>();
        Set<String> seen = new HashSet<>();
        long after = 0;
        int next = 0;
        while (true) {
            Page<VolumeRecord> page = catalog.volumes().page(after, 1 + random.nextInt(7));
            for (String id : ids(page.items())) {
                assertTrue(seen.add(id), "returned twice: " + id);
                assertTrue(live.contains(id), "returned after its delete: " + id);
            }
            if (!page.more()) break;
            after = page.lastSeq();
            for (int k = random.nextInt(3); k > 0; k--) {  // delete some rows, seen or not
                String victim = new ArrayList<>(live).get(random.nextInt(live.size()));
                assertTrue(catalog.volumes().delete(victim));
                live.remove(victim);
                untouched.remove(victim);
            }
            if (next < 30) {
                String id = "new" + next++;
                catalog.volumes().insert(volume(id));
                live.add(id);
                insertedDuring.add(id);
            }
        }
        assertTrue(seen.containsAll(untouched), "missed rows that were there all along");
        for (String id : insertedDuring) {
            if (live.contains(id)) assertTrue(seen.contains(id), "rows added during paging come at the end: " + id);
        }
    }

    @Test
    void seqIsNeverReused() {
        catalog.volumes().insert(volume("a"));
        catalog.volumes().insert(volume("b"));
        long afterB = catalog.volumes().page(0, 2).lastSeq();
        catalog.volumes().delete("b");
        catalog.volumes().insert(volume("c"));
        // a plain rowid would hand b's seq to c, and a client holding afterB would never see c
        assertEquals(List.of("c"), ids(catalog.volumes().page(afterB, 10).items()));
    }

    @Test
    void snapshotFilters() {
        catalog.inTransaction(tx -> {
            for (int i = 0; i < 30; i++) tx.snapshots().insert(Samples.snapshot("s" + i, "v" + (i % 3)));
            return null;
        });
        List<String> ofV1 = List.of("s1", "s4", "s7", "s10", "s13", "s16", "s19", "s22", "s25", "s28");
        for (int limit = 1; limit <= 11; limit++) {
            int l = limit;
            assertEquals(ofV1, drain((after, x) -> catalog.snapshots().page(after, l,
                    SnapshotFilter.bySourceVolume("v1")), limit));
        }
        assertEquals(30, drain((after, x) -> catalog.snapshots().page(after, 4, SnapshotFilter.ALL), 4).size());
        assertEquals(List.of("s7"), drain((after, x) -> catalog.snapshots().page(after, 1, SnapshotFilter.byId("s7")), 1));
        assertEquals(List.of("s7"), ids(catalog.snapshots().page(0, 5, new SnapshotFilter("s7", "v1")).items()));
        assertEquals(List.of(), catalog.snapshots().page(0, 5, new SnapshotFilter("s7", "v2")).items());
        assertEquals(List.of(), catalog.snapshots().page(0, 5, SnapshotFilter.byId("nope")).items());
        assertEquals(List.of(), catalog.snapshots().page(0, 5, SnapshotFilter.bySourceVolume("nope")).items());
    }

    @Test
    void groupTablesPageToo() {
        for (int i = 0; i < 9; i++) {
            catalog.volumeGroups().insert(Samples.volumeGroup("g" + i));
            catalog.groupSnapshots().insert(Samples.groupSnapshot("gs" + i, List.of("v")));
        }
        assertEquals(9, drain((after, l) -> catalog.volumeGroups().page(after, l), 2).size());
        assertEquals(9, drain((after, l) -> catalog.groupSnapshots().page(after, l), 4).size());
    }

    private static List<String> drain(BiFunction<Long, Integer, Page<?>> pager, int limit) {
        List<String> all = new ArrayList<>();
        long after = 0;
        while (true) {
            Page<?> page = pager.apply(after, limit);
            all.addAll(ids(page.items()));
            if (!page.more()) return all;
            after = page.lastSeq();
        }
    }
}
