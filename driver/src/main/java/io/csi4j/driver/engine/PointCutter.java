package io.csi4j.driver.engine;

/**
 * Capability: cut a replication point (a snapshot) knowing the point its secondary holds, so that the engine may make
 * the new one as that base plus what changed since, instead of a copy of the whole image (docs/data-path.md, section 7:
 * a whole clone's cost follows the image's extent count, and a staged volume's writes wait for it). The result is the
 * very snapshot {@link PoolStorage#createSnapshot} would cut: the same bytes, the same size, the same answers on repeat.
 */
public interface PointCutter extends Capability {

    /**
     * As {@link PoolStorage#createSnapshot}; {@code baseSnapshotId} (empty: none) is the point the secondary holds, a
     * hint only: one that is gone, of another size or unusable for any reason makes a whole cut.
     */
    long cutPoint(String snapshotId, String volumeId, Artifact.Label label, String baseSnapshotId);
}
