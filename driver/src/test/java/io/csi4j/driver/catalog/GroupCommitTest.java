package io.csi4j.driver.catalog;

import io.csi4j.driver.model.State;

import static io.csi4j.driver.catalog.Samples.volume;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Every write is durable when it returns; concurrent writers share syncs of the write-ahead log. */
class GroupCommitTest {
    @TempDir
    Path dir;

    @Test
    void aWriteThatReturnedIsCoveredByASync() {
        try (Catalog catalog = Catalog.openIn(dir)) {
            var opened = catalog.commitCounts();
            assertEquals(opened.written(), opened.durable(), "open syncs what it wrote");
            for (int i = 0; i < 20; i++) {
                catalog.volumes().insert(volume("v" + i));
                var counts = catalog.commitCounts();
                assertEquals(counts.written(), counts.durable(), "after insert " + i);
            }
            catalog.inTransaction(tx -> {
                tx.volumes().setState("v0", State.CREATING, State.READY);
                tx.volumes().setState("v1", State.CREATING, State.READY);
                return null;
            });
            var counts = catalog.commitCounts();
            assertEquals(counts.written(), counts.durable(), "after a transaction");
            assertEquals(opened.syncs() + 21, counts.syncs(), "one writer alone: one sync per commit");
        }
    }

    @Test
    void aFailedTransactionNeedsNoSync() {
        try (Catalog catalog = Catalog.openIn(dir)) {
            catalog.volumes().insert(volume("v"));
            var before = catalog.commitCounts();
            try {
                catalog.inTransaction(tx -> {
                    tx.volumes().setState("v", State.CREATING, State.READY);
                    throw new IllegalStateException("no");
                });
            } catch (IllegalStateException expected) {
                // rolled back
            }
            assertEquals(before, catalog.commitCounts());
            assertEquals(State.CREATING, catalog.volumes().byId("v").orElseThrow().state());
        }
    }

    @Test
    @Timeout(120)
    void concurrentWritersShareSyncs() throws Exception {
        int writers = 16;
        int perWriter = 40;
        try (Catalog catalog = Catalog.openIn(dir); ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            var before = catalog.commitCounts();
            CyclicBarrier start = new CyclicBarrier(writers);
            List<Future<?>> tasks = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int writer = w;
                tasks.add(threads.submit(() -> {
                    start.await();
                    for (int i = 0; i < perWriter; i++) {
                        String id = "w" + writer + "-" + i;
                        catalog.volumes().insert(volume(id));
                        var counts = catalog.commitCounts();
                        assertTrue(counts.durable() >= counts.written() - writers, "at most one commit per writer in doubt");
                    }
                    return null;
                }));
            }
            for (Future<?> task : tasks) task.get();
            var after = catalog.commitCounts();
            long commits = after.written() - before.written();
            long syncs = after.syncs() - before.syncs();
            assertEquals(writers * perWriter, commits);
            assertEquals(after.written(), after.durable());
            assertEquals(writers * perWriter, catalog.volumes().count());
            assertTrue(syncs < commits, "concurrent commits should share syncs: " + syncs + " syncs for " + commits + " commits");
            System.out.printf("group commit: %d commits, %d syncs%n", commits, syncs);
        }
    }
}
