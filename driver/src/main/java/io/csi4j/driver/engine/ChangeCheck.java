package io.csi4j.driver.engine;

/**
 * Capability: prove, cheaply, that a volume still holds exactly the bytes of a snapshot of it, so that a replication
 * round keeps the point its secondary holds instead of cutting and copying a new one (docs/replication.md, "A round of
 * an unchanged volume"). A proof or nothing: any doubt answers false, and the round cuts as always.
 */
public interface ChangeCheck extends Capability {

    /**
     * True only when, at one instant during the call, the volume read byte for byte as {@code snapshotId} (a snapshot of
     * it, of its size) and nothing that could write it without this node's agent was attached (no loop device: neither
     * staged nor published), so that the snapshot is as good a point as one cut then. False in every other case,
     * including an unknown snapshot or volume and any error.
     */
    boolean unchangedSince(String volumeId, String snapshotId);
}
