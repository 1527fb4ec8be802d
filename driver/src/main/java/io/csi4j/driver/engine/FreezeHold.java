package io.csi4j.driver.engine;

import io.csi4j.driver.os.Freeze;
import io.csi4j.driver.storage.StorageException;
import java.util.Collection;
import java.util.Set;
import java.util.TreeSet;

/**
 * Volumes held frozen between calls. A group snapshot that spans nodes freezes every member on every node
 * first, then cuts each node's part under its hold, then thaws all: no write reaches any member between the
 * first cut and the last. A cut runs only while its hold is still frozen, and a release waits for a running
 * cut, so a hold that lapsed can never let a cut through unfrozen.
 */
public final class FreezeHold implements AutoCloseable {
    private final Set<String> volumeIds;
    private final Freeze.Frozen frozen;  // null when no member is mounted: nothing to freeze
    /** Run once after the thaw: what the engine let wait for the hold goes on (its unmounts of members). */
    private final Runnable onRelease;
    private boolean released;

    public FreezeHold(Collection<String> volumeIds, Freeze.Frozen frozen) {
        this(volumeIds, frozen, () -> { });
    }

    public FreezeHold(Collection<String> volumeIds, Freeze.Frozen frozen, Runnable onRelease) {
        this.volumeIds = new TreeSet<>(volumeIds);
        this.frozen = frozen;
        this.onRelease = onRelease;
    }

    public Set<String> volumeIds() {
        return Set.copyOf(volumeIds);
    }

    /** Runs {@code work} while the hold is frozen; BUSY when it was released or lapsed first. */
    public synchronized void whileFrozen(Collection<String> members, Runnable work) {
        if (released) throw StorageException.busy("the freeze hold on " + volumeIds + " was released before the cut; retry");
        if (!volumeIds.containsAll(members)) {
            throw StorageException.invalid("volumes " + members + " are not all held frozen (the hold covers " + volumeIds + ")");
        }
        work.run();
    }

    public synchronized boolean released() {
        return released;
    }

    /** Thaws (once), then runs the release; waits for a cut running under the hold. */
    @Override
    public synchronized void close() {
        if (released) return;
        released = true;
        try {
            if (frozen != null) frozen.close();
        } finally {
            onRelease.run();
        }
    }
}
