package io.csi4j.driver.snapshot;

/**
 * Whether this node may snapshot a volume for the CO now. A replicated volume's copy is snapshotted only where it is
 * the primary of the highest epoch this node knows (docs/replication.md, "Snapshots while a handoff runs"); a
 * replication point, which the old primary cuts during a handoff, does not ask.
 */
@FunctionalInterface
public interface SnapshotSources {
    /** Every volume may be snapshotted (a node without replication). */
    SnapshotSources ANY = volumeId -> {};

    /** Returns if {@code volumeId} may be snapshotted here; a DomainException (UNAVAILABLE: retry) if not now. */
    void checkSnapshotSource(String volumeId);
}
