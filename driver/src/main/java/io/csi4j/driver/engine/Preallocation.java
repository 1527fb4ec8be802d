package io.csi4j.driver.engine;

/**
 * Thick volumes ({@code csi4j.io/provisioning: thick}): an image fully allocated and written up front, so that the
 * fsync of an overwrite needs no allocation and no unwritten-extent conversion in the pool's journal. An engine
 * without it (the dir engine) makes no thick volumes. Every path into a thick volume ends here: a blank create,
 * a restore, a clone, a copy from another node and an expansion.
 */
public interface Preallocation extends Capability {

    /**
     * NO_SPACE unless {@code bytes} more fit the space really free beneath the pool (no overcommit: a thick volume
     * takes all of it at once). Reads only.
     */
    void requireRoom(long bytes);

    /**
     * Makes the volume's image thick, durably: shared extents unshared, holes allocated, zeros written wherever it
     * reads as zeros without being written; a {@code blank} one is marked as a fresh fill (all zeros: formatted at
     * its first stage although every block is allocated). Idempotent. The volume must not be attached (nothing may
     * write into it meanwhile). NO_SPACE when the pool cannot hold it.
     */
    void fill(String volumeId, boolean blank);

    /**
     * {@link PoolStorage#expandVolume} of a thick volume: the new part allocated and written before an attached loop
     * device is told the new size, so nothing writes there during the fill. Returns the new size.
     */
    long expand(String volumeId, long newCapacityBytes);
}
