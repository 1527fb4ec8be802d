package io.csi4j.driver.replication;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * One reentrant lock per volume id, kept only while a thread holds or waits on it: an entry is made by the first
 * taker and dropped by the last one out, so volumes created and deleted over an agent's life leave nothing behind
 * (before, a map entry per volume id ever seen stayed for the process's life). Exclusive as one lock per id: the count
 * of takers is changed only inside the map's atomic {@code compute} for that id, so while any taker holds or waits
 * on an entry it stays mapped and every other taker of the id gets the same lock; a taker arriving after the last one
 * left makes a new entry, which nobody else holds.
 */
final class VolumeLocks {
    private static final class Entry {
        final ReentrantLock lock = new ReentrantLock();
        int takers;              // read and written only inside the map's compute for this key
    }

    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

    /** Runs {@code work} holding {@code id}'s lock (reentrant), and returns what it returns. */
    <T> T call(String id, Supplier<T> work) {
        Entry entry = entries.compute(id, (k, e) -> {
            Entry taken = e == null ? new Entry() : e;
            taken.takers++;
            return taken;
        });
        try {
            entry.lock.lock();
            try {
                return work.get();
            } finally {
                entry.lock.unlock();
            }
        } finally {
            entries.computeIfPresent(id, (k, e) -> --e.takers == 0 ? null : e);
        }
    }

    /** Runs {@code work} holding {@code id}'s lock (reentrant). */
    void run(String id, Runnable work) {
        call(id, () -> {
            work.run();
            return null;
        });
    }

    /** How many ids have an entry now: those held or waited on. */
    int size() {
        return entries.size();
    }
}
