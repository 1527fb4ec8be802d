package io.csi4j.driver.catalog;

import io.csi4j.driver.model.Page;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeRecord;

import static io.csi4j.driver.catalog.Samples.volume;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class ConcurrencyTest {
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
    @Timeout(120)
    void concurrentWritersAndReadersOnVirtualThreads() throws Exception {
        int writers = 8;
        int perWriter = 200;
        Queue<String> committed = new ConcurrentLinkedQueue<>();
        AtomicBoolean writing = new AtomicBoolean(true);
        AtomicLong reads = new AtomicLong();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> writerTasks = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int writer = w;
                writerTasks.add(threads.submit(() -> {
                    for (int i = 0; i < perWriter; i++) {
                        String id = "w" + writer + "-" + i;
                        if (i % 10 == 9) {  // some as transactions that also change state
                            catalog.inTransaction(tx -> {
                                tx.volumes().insert(volume(id));
                                return tx.volumes().setState(id, State.CREATING, State.READY);
                            });
                        } else {
                            catalog.volumes().insert(volume(id));
                        }
                        committed.add(id);
                    }
                    return null;
                }));
            }
            List<Future<?>> readerTasks = new ArrayList<>();
            for (int r = 0; r < 6; r++) {
                readerTasks.add(threads.submit(() -> {
                    long lastCount = 0;
                    while (writing.get()) {
                        List<String> known = new ArrayList<>(committed);
                        long count = catalog.volumes().count();
                        assertTrue(count >= lastCount, "count went back from " + lastCount + " to " + count);
                        assertTrue(count >= known.size(), "a committed insert is invisible");
                        lastCount = count;
                        if (!known.isEmpty()) {
                            String id = known.get(ThreadLocalRandom.current().nextInt(known.size()));
                            assertEquals(id, catalog.volumes().byId(id).orElseThrow().id());
                        }
                        catalog.volumes().page(ThreadLocalRandom.current().nextLong(count + 1), 20);
                        reads.incrementAndGet();
                    }
                    return null;
                }));
            }
            for (Future<?> f : writerTasks) f.get();
            writing.set(false);
            for (Future<?> f : readerTasks) f.get();
        }
        assertEquals(writers * perWriter, catalog.volumes().count());
        assertEquals(writers * perWriter / 10, catalog.volumes().count(State.READY));
        Set<String> paged = new HashSet<>();
        long after = 0;
        Page<VolumeRecord> page;
        do {
            page = catalog.volumes().page(after, 97);
            for (VolumeRecord v : page.items()) assertTrue(paged.add(v.id()), "twice: " + v.id());
            after = page.lastSeq();
        } while (page.more());
        assertEquals(new HashSet<>(committed), paged);
        assertEquals(List.of(), catalog.integrityCheck());
        assertTrue(reads.get() > 0);
    }

    @Test
    @Timeout(60)
    void manyMoreReadersThanConnections() throws Exception {
        for (int i = 0; i < 50; i++) catalog.volumes().insert(volume("v" + i));
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Integer>> tasks = new ArrayList<>();
            for (int t = 0; t < 2000; t++) {
                int n = t % 50;
                tasks.add(threads.submit(() -> catalog.volumes().byId("v" + n).orElseThrow().name().length()));
            }
            for (Future<Integer> f : tasks) assertEquals(true, f.get() > 0);
        }
    }

    @Test
    @Timeout(30)
    void anOpenReadDoesNotBlockTheWriter() throws Exception {
        catalog.volumes().insert(volume("before"));
        // hold a read transaction open (an unfinished result set) on a pooled reader connection
        catalog.volumes().session.read(c -> {
            try (Statement s = c.jdbc().createStatement(); ResultSet open = s.executeQuery("SELECT id FROM volumes")) {
                assertTrue(open.next());
                Thread writer = Thread.ofVirtual().start(() -> catalog.volumes().insert(volume("during")));
                try {
                    assertTrue(writer.join(java.time.Duration.ofSeconds(5)), "writer blocked by an open read");
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                // the reader still sees its snapshot: WAL readers are isolated from later commits
                try (Statement s2 = c.jdbc().createStatement();
                        ResultSet count = s2.executeQuery("SELECT count(*) FROM volumes")) {
                    count.next();
                    assertEquals(1, count.getInt(1));
                }
            }
            return null;
        });
        assertEquals(2, catalog.volumes().count());
    }

    @Test
    @Timeout(30)
    void anOpenTransactionDoesNotBlockReaders() throws Exception {
        catalog.volumes().insert(volume("committed"));
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread writer = Thread.ofVirtual().start(() -> catalog.inTransaction(tx -> {
            tx.volumes().insert(volume("uncommitted"));
            inside.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            return null;
        }));
        assertTrue(inside.await(5, TimeUnit.SECONDS));
        long start = System.nanoTime();
        assertTrue(catalog.volumes().byId("committed").isPresent());
        assertTrue(catalog.volumes().byId("uncommitted").isEmpty(), "uncommitted row visible to a reader");
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(1), "reader waited for the writer");
        release.countDown();
        writer.join();
        assertTrue(catalog.volumes().byId("uncommitted").isPresent());
    }
}
