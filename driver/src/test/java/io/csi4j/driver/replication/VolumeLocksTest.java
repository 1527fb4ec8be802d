package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The per-volume locks are dropped by the last taker out, and stay one lock per id while anyone holds or waits: no
 * entry outlives its use, and pruning never lets two takers of one id in at once.
 */
class VolumeLocksTest {
    @Test
    void takersOfOneIdNeverOverlapWhileEntriesComeAndGo() throws Exception {
        var locks = new VolumeLocks();
        List<String> ids = List.of("v-1", "v-2");
        int threads = 8, rounds = 3000;
        var inside = List.of(new AtomicInteger(), new AtomicInteger());
        int[] counted = new int[2];                              // plain ints: only their lock guards them
        var overlaps = new AtomicInteger();
        var start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                for (int r = 0; r < rounds; r++) {
                    int k = r % 2;
                    locks.run(ids.get(k), () -> {
                        if (inside.get(k).incrementAndGet() != 1) overlaps.incrementAndGet();
                        counted[k]++;
                        if (counted[k] % 64 == 0) Thread.yield();        // let others queue on the entry
                        inside.get(k).decrementAndGet();
                    });
                }
            }));
        }
        start.countDown();
        for (Thread w : workers) w.join(TimeUnit.SECONDS.toMillis(60));
        assertEquals(0, overlaps.get(), "two takers of one id inside at once");
        assertEquals(threads * rounds / 2, counted[0]);
        assertEquals(threads * rounds / 2, counted[1]);
        assertEquals(0, locks.size(), "no entry left once nobody holds or waits");
    }

    @Test
    void aWaitingTakerKeepsTheEntryAndGetsTheSameLock() throws Exception {
        var locks = new VolumeLocks();
        var held = new CountDownLatch(1);
        var release = new CountDownLatch(1);
        List<String> order = new CopyOnWriteArrayList<>();
        var first = Thread.ofPlatform().start(() -> locks.run("v", () -> {
            held.countDown();
            await(release);
            order.add("first");
        }));
        held.await();
        var second = Thread.ofPlatform().start(() -> locks.run("v", () -> order.add("second")));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (second.getState() != Thread.State.WAITING) {
            assertTrue(System.nanoTime() < deadline, "the second taker never waited: " + second.getState());
            Thread.sleep(5);
        }
        assertEquals(1, locks.size(), "one entry, held and waited on");
        release.countDown();
        first.join();
        second.join();
        assertEquals(List.of("first", "second"), order);
        assertEquals(0, locks.size());
    }

    @Test
    void reentrantAndDroppedWhenTheWorkThrows() {
        var locks = new VolumeLocks();
        int depth = locks.call("v", () -> locks.call("v", locks::size));
        assertEquals(1, depth, "the same entry, taken twice by one thread");
        assertThrows(IllegalStateException.class, () -> locks.run("v", () -> {
            throw new IllegalStateException("boom");
        }));
        assertEquals(0, locks.size());
        var other = Thread.ofPlatform().start(() -> locks.run("v", () -> { }));   // not left locked by the failure
        assertTimeoutJoin(other);
    }

    private static void assertTimeoutJoin(Thread t) {
        try {
            assertTrue(t.join(java.time.Duration.ofSeconds(10)), "the lock was left held");
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
