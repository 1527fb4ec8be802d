package io.csi4j.driver.engine;

import java.util.function.Supplier;
import java.util.stream.IntStream;

/**
 * Locks by id, for what must not interleave with a delete of the same artifact: an expand or a label that found the
 * artifact must not write its sidecar (or re-create its file) after a concurrent delete removed it
 * (DeleteVolumeGroup deletes member volumes that other calls may be working on). A fixed set of 64 monitors, an id
 * hashed onto one: memory does not grow with the ids seen, and two ids may share a lock, which only serializes them.
 * One per pool ({@link PoolLayout#locks}), taken by the layout's deletes and by the engines.
 */
public final class IdLocks {
    private final Object[] locks = IntStream.range(0, 64).mapToObj(i -> new Object()).toArray();

    private Object lockFor(String id) {
        return locks[Math.floorMod(id.hashCode(), locks.length)];
    }

    /** Runs {@code body} while no artifact with this id is deleted. Take no other id's lock inside. */
    public <T> T locked(String id, Supplier<T> body) {
        synchronized (lockFor(id)) {
            return body.get();
        }
    }

    /** {@link #locked(String, Supplier)} for work without a result. */
    public void locked(String id, Runnable body) {
        synchronized (lockFor(id)) {
            body.run();
        }
    }
}
