package io.csi4j.testkit.reference;

/**
 * Which parts of the spec the reference plugin offers (and advertises). {@link #full()} is everything
 * it implements; {@link #bare()} a plugin that can only create volumes and publish them on the node.
 * {@code topology} adds VOLUME_ACCESSIBILITY_CONSTRAINTS (one node, one segment); {@code maxVolumesPerNode}
 * is reported by NodeGetInfo and enforced by ControllerPublishVolume (0: no limit); {@code snapshotMetadata}
 * serves SnapshotMetadata (a snapshot's whole size in 64 KiB tuples; no changes between snapshots).
 */
public record Options(
        boolean stage,
        boolean controllerPublish,
        boolean listing,
        boolean snapshots,
        boolean cloning,
        boolean expand,
        boolean stats,
        boolean getters,
        boolean modify,
        boolean groupSnapshots,
        boolean addons,
        boolean doNotAllowGroupToDeleteVolumes,
        boolean groupSnapshotsOnlyUnpublished,
        boolean topology,
        int maxVolumesPerNode,
        boolean snapshotMetadata) {

    public static Options full() {
        return new Options(true, true, true, true, true, true, true, true, true, true, true, false, false, true, 4, true);
    }

    public static Options bare() {
        return new Options(false, false, false, false, false, false, false, false, false, false, false, false, false, false, 0, false);
    }

    public Options withDoNotAllowGroupToDeleteVolumes() {
        return new Options(stage, controllerPublish, listing, snapshots, cloning, expand, stats, getters, modify, groupSnapshots, addons, true,
                groupSnapshotsOnlyUnpublished, topology, maxVolumesPerNode, snapshotMetadata);
    }

    public Options withoutAddons() {
        return new Options(stage, controllerPublish, listing, snapshots, cloning, expand, stats, getters, modify, groupSnapshots, false,
                doNotAllowGroupToDeleteVolumes, groupSnapshotsOnlyUnpublished, topology, maxVolumesPerNode, snapshotMetadata);
    }

    /** Like csi4j's dir engine: no write-order consistent group snapshot of a volume published writable. */
    public Options withGroupSnapshotsOnlyUnpublished() {
        return new Options(stage, controllerPublish, listing, snapshots, cloning, expand, stats, getters, modify, groupSnapshots, addons,
                doNotAllowGroupToDeleteVolumes, true, topology, maxVolumesPerNode, snapshotMetadata);
    }
}
