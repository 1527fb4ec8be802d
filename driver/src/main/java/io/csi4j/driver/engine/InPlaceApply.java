package io.csi4j.driver.engine;

import java.util.List;
import java.util.Optional;

/**
 * Capability: a secondary's round applied to its image in place under a journal (docs/inplace-rounds.md, section 1),
 * instead of a new image built beside it ({@link DataMover#beginImport}). The received ranges are written and synced
 * to a journal first, then written into the image, which is the held point's replica (one inode), synced, and the
 * replica renamed to the new point. A crash at any step leaves a journal that {@link #replay} finishes or discards, so
 * the image is always a complete point once replay has run: the one the replication state names, or the journal's.
 */
public interface InPlaceApply extends Capability {

    /** The most a round may journal: a bigger one is built beside as today (the apply holds the volume's lock). */
    static long journalLimit(long capacityBytes) {
        return Math.min(256L << 20, capacityBytes / 8);
    }

    /**
     * The round's import applied in place, or empty when a condition of docs/inplace-rounds.md 1.1 that the engine sees
     * does not hold (then the caller builds beside, {@link DataMover#beginImport}, with the same arguments): a reflink
     * pool, the image and {@code base}'s replica one inode, the image the point's size ({@code sourceBytes}, no growth
     * to {@code capacityBytes}), no loop device on it, {@code bytesToSend} within {@link #journalLimit}, the journal's
     * space promised. The caller has checked that {@code base} is the point the copy holds and holds the volume's
     * replication lock. Commit syncs the journal (complete from then), then under the volume's lock looks again: a loop
     * device refuses (IN_USE, the journal dropped, the image untouched); an image split from its replica or resized
     * meanwhile is built beside from the journal; else the records are written into the image, synced, the replica
     * renamed to {@code keepAs} and the journal dropped. A commit that fails after the journal is complete leaves it
     * for {@link #replay}. Closing it uncommitted leaves nothing behind.
     */
    Optional<ImageImport> beginInPlace(String volumeId, long sourceBytes, long capacityBytes, AccessType access, String sourceRef,
                                       Artifact.Label label, Replica base, Replica keepAs, long bytesToSend);

    /** The volumes with a complete journal (a round applied in place that did not finish). Reads only. */
    List<String> journals();

    /**
     * Finishes or discards the volume's journal given the point its state names ({@code heldPoint}, empty: none); the
     * caller holds the replication lock and records what it answers. Nothing to do without a journal.
     */
    Replay replay(String volumeId, String heldPoint);

    /** Removes the volume's journal, durably; nothing when absent. */
    void dropJournal(String volumeId);

    /** What {@link #replay} did. */
    sealed interface Replay {
        /** No journal. */
        record None() implements Replay {}

        /** The journal was dropped and nothing written: the image is still the held point ({@code why}). */
        record Discarded(String why) implements Replay {}

        /** The journal was applied again and dropped: the image and its replica are {@code point}, to be recorded. */
        record Applied(String point) implements Replay {}

        /**
         * The journal failed its check or its apply, or names a point the state does not: the image may be torn. The
         * journal is kept: the caller records that the copy holds no point, drops its replicas, then the journal.
         */
        record Torn(String why) implements Replay {}
    }
}
