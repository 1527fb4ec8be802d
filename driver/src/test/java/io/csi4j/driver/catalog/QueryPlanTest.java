package io.csi4j.driver.catalog;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every lookup, page and update the tables run must reach its rows through an index (a SEARCH), never a
 * SCAN of the table nor a sort: the catalog stays fast at 100k rows. Only the unfiltered page is a rowid
 * range; every filter has an index of its own. Only count() may scan.
 */
class QueryPlanTest {
    @TempDir
    Path dir;

    @Test
    void everyQueryIsAnIndexSearch() throws Exception {
        Map<String, String> queries = new LinkedHashMap<>();
        try (Catalog catalog = Catalog.openIn(dir)) {
            queries.putAll(catalog.volumes().indexedQueries());
            queries.putAll(catalog.snapshots().indexedQueries());
            queries.putAll(catalog.groupSnapshots().indexedQueries());
            queries.putAll(catalog.volumeGroups().indexedQueries());
            queries.putAll(catalog.publications().indexedQueries());
            for (int i = 0; i < 200; i++) {
                catalog.volumes().insert(Samples.volume("v" + i));
                catalog.snapshots().insert(Samples.snapshot("s" + i, "v" + (i % 10)));
            }
        }
        assertTrue(queries.size() >= 40, "too few queries registered: " + queries.size());
        Path file = dir.resolve(Catalog.FILE_NAME);
        StringBuilder report = new StringBuilder();
        for (Map.Entry<String, String> query : queries.entrySet()) {
            List<String> plan = RawSqlite.query(file, "EXPLAIN QUERY PLAN " + query.getValue());
            String detail = String.join(" / ", plan.stream().map(row -> row.substring(row.lastIndexOf('|') + 1)).toList());
            report.append(String.format("%-36s %s%n", query.getKey(), detail));
            assertTrue(detail.contains("SEARCH "), query.getKey() + " does not search an index: " + detail);
            if (query.getKey().endsWith(".page")) {
                assertTrue(detail.contains("USING INTEGER PRIMARY KEY (rowid>?)"), query.getKey() + ": " + detail);
            } else {
                // a rowid range would read every row after the page start: filters need their own index
                assertFalse(detail.contains("INTEGER PRIMARY KEY"), query.getKey() + " misses its index: " + detail);
            }
            // json_each walks the list of ids the query was given (a page's), not a table
            assertFalse(detail.replace("SCAN json_each", "").contains("SCAN "), query.getKey() + " scans: " + detail);
            assertFalse(detail.contains("TEMP B-TREE"), query.getKey() + " sorts: " + detail);
        }
        System.out.print(report);
    }
}
