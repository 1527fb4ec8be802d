package io.csi4j.driver.catalog;

import io.csi4j.driver.model.State;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

/**
 * Not a test: measures the catalog on this machine's disk. Run from the repository root after a build:
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -cp driver/target/test-classes:driver/target/classes:sdk/target/classes:\
 *   ~/.m2/repository/org/xerial/sqlite-jdbc/3.54.1.0/sqlite-jdbc-3.54.1.0.jar:\
 *   ~/.m2/repository/io/grpc/grpc-api/1.85.1/grpc-api-1.85.1.jar io.csi4j.driver.catalog.CatalogBench [dir]
 * </pre>
 */
public final class CatalogBench {
    private static final int AUTOCOMMIT_SAMPLE = 5_000;

    private CatalogBench() {}

    public static void main(String[] args) throws Exception {
        Path base = args.length > 0 ? Path.of(args[0]) : Path.of(System.getProperty("java.io.tmpdir"));
        for (int rows : new int[] {10_000, 100_000}) {
            Path dir = Files.createTempDirectory(base, "catalog-bench-");
            try {
                run(dir, rows);
            } finally {
                deleteTree(dir);
            }
        }
    }

    private static void run(Path dir, int rows) throws Exception {
        System.out.printf("%n== %,d volumes (WAL, synchronous=FULL) in %s%n", rows, dir);
        Random random = new Random(1);
        try (Catalog catalog = Catalog.openIn(dir)) {
            // autocommit inserts: one fsync'd transaction each
            int autocommit = Math.min(AUTOCOMMIT_SAMPLE, rows);
            long[] insertNanos = new long[autocommit];
            long start = System.nanoTime();
            for (int i = 0; i < autocommit; i++) {
                long t = System.nanoTime();
                catalog.volumes().insert(Samples.volume("v" + i));
                insertNanos[i] = System.nanoTime() - t;
            }
            report("insert, autocommit", insertNanos, System.nanoTime() - start);

            // the rest in transactions of 1000
            start = System.nanoTime();
            for (int from = autocommit; from < rows; from += 1000) {
                int first = from;
                catalog.inTransaction(tx -> {
                    for (int i = first; i < Math.min(first + 1000, rows); i++) tx.volumes().insert(Samples.volume("v" + i));
                    return null;
                });
            }
            if (rows > autocommit) {
                double seconds = (System.nanoTime() - start) / 1e9;
                System.out.printf("%-28s %,10.0f rows/s (1000 per transaction)%n", "insert, batched", (rows - autocommit) / seconds);
            }

            // autocommit again, now that the table is full: does it stay flat?
            long[] lateNanos = new long[1000];
            start = System.nanoTime();
            for (int i = 0; i < lateNanos.length; i++) {
                long t = System.nanoTime();
                catalog.volumes().insert(Samples.volume("late" + i));
                lateNanos[i] = System.nanoTime() - t;
            }
            report("insert, autocommit, full", lateNanos, System.nanoTime() - start);

            long[] casNanos = new long[2000];
            start = System.nanoTime();
            for (int i = 0; i < casNanos.length; i++) {
                long t = System.nanoTime();
                if (!catalog.volumes().setState("v" + i, State.CREATING, State.READY)) throw new AssertionError();
                casNanos[i] = System.nanoTime() - t;
            }
            report("setState (CAS), autocommit", casNanos, System.nanoTime() - start);

            for (int i = 0; i < 50_000; i++) catalog.volumes().byId("v" + random.nextInt(rows));  // JIT warm-up
            report("byId", time(100_000, () -> catalog.volumes().byId("v" + random.nextInt(rows)).orElseThrow()));
            report("byName", time(100_000, () -> catalog.volumes().byName("pvc-v" + random.nextInt(rows)).orElseThrow()));
            report("byId, absent", time(100_000, () -> catalog.volumes().byId("nope" + random.nextInt(rows))));
            report("page of 100", time(5_000, () -> catalog.volumes().page(random.nextInt(rows), 100)));
            report("inState(CREATING) count", time(200, () -> catalog.volumes().count(State.CREATING)));

            int threads = 8;
            int perThread = 50_000;
            start = System.nanoTime();
            try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                List<Future<?>> tasks = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    tasks.add(pool.submit(() -> {
                        Random r = new Random();
                        for (int i = 0; i < perThread; i++) catalog.volumes().byId("v" + r.nextInt(rows)).orElseThrow();
                        return null;
                    }));
                }
                for (Future<?> task : tasks) task.get();
            }
            System.out.printf("%-28s %,10.0f lookups/s (%d virtual threads, %d read connections, %d cores)%n",
                    "byId, concurrent", threads * perThread / ((System.nanoTime() - start) / 1e9), threads,
                    Catalog.READERS, Runtime.getRuntime().availableProcessors());

            start = System.nanoTime();
            List<String> problems = catalog.integrityCheck();
            System.out.printf("%-28s %10.1f ms (%s)%n", "integrity_check", (System.nanoTime() - start) / 1e6,
                    problems.isEmpty() ? "ok" : problems);
        }
        long start = System.nanoTime();
        try (Catalog catalog = Catalog.openIn(dir)) {
            System.out.printf("%-28s %10.1f ms (incl. quick_check; %,d rows)%n", "open", (System.nanoTime() - start) / 1e6,
                    catalog.volumes().count());
        }
        System.out.printf("%-28s %,10d KiB%n", "file size", Files.size(dir.resolve(Catalog.FILE_NAME)) / 1024);
    }

    private static long[] time(int n, Runnable op) {
        long[] nanos = new long[n];
        for (int i = 0; i < n; i++) {
            long t = System.nanoTime();
            op.run();
            nanos[i] = System.nanoTime() - t;
        }
        return nanos;
    }

    private static void report(String what, long[] nanos) {
        report(what, nanos, Arrays.stream(nanos).sum());
    }

    private static void report(String what, long[] nanos, long totalNanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        System.out.printf("%-28s %,10.0f ops/s   p50 %7.1f us   p99 %7.1f us   max %8.1f us%n", what,
                nanos.length / (totalNanos / 1e9), sorted[sorted.length / 2] / 1e3,
                sorted[(int) (sorted.length * 0.99)] / 1e3, sorted[sorted.length - 1] / 1e3);
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
        }
    }
}
