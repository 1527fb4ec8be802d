package io.csi4j.sdk.interceptor;

import io.csi4j.proto.addons.volumegroup.CreateVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.DeleteVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.ModifyVolumeGroupMembershipRequest;
import io.csi4j.proto.csi.ControllerExpandVolumeRequest;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.ControllerModifyVolumeRequest;
import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteSnapshotRequest;
import io.csi4j.proto.csi.DeleteVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.GroupControllerGrpc;
import io.csi4j.proto.csi.NodeExpandVolumeRequest;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import java.util.ArrayList;
import java.util.List;
import io.csi4j.proto.addons.reclaimspace.ControllerReclaimSpaceRequest;
import io.csi4j.proto.addons.reclaimspace.NodeReclaimSpaceRequest;
import io.csi4j.proto.addons.reclaimspace.ReclaimSpaceControllerGrpc;
import io.csi4j.proto.addons.reclaimspace.ReclaimSpaceNodeGrpc;

/**
 * The default keys of the {@link InFlightGuard} for every mutating CSI and CSI-Addons RPC. Reads (List*, Get*,
 * Validate*, stats, capabilities) are not guarded: they never conflict and the CO polls some of them.
 *
 * <p>Controller calls lock the volume id (or the name, for creates); node calls lock "node volume &lt;id&gt;", so a
 * controller and a node operation on the same volume, served by one process, do not exclude each other.
 */
public final class CsiKeys {
    private CsiKeys() {}

    public static String volume(String id) { return "volume " + id; }
    public static String volumeName(String name) { return "volume name " + name; }
    public static String nodeVolume(String id) { return "node volume " + id; }
    public static String snapshot(String id) { return "snapshot " + id; }
    public static String snapshotName(String name) { return "snapshot name " + name; }
    public static String groupSnapshot(String id) { return "group snapshot " + id; }
    public static String groupSnapshotName(String name) { return "group snapshot name " + name; }
    public static String volumeGroup(String id) { return "volume group " + id; }
    public static String volumeGroupName(String name) { return "volume group name " + name; }

    /** Adds the default keys of every mutating csi.v1 and volumegroup RPC. */
    static void addDefaults(InFlightGuard.Builder b) {
        b.key(ControllerGrpc.getCreateVolumeMethod(), (CreateVolumeRequest r) -> List.of(volumeName(r.getName())));
        b.key(ControllerGrpc.getDeleteVolumeMethod(), (DeleteVolumeRequest r) -> List.of(volume(r.getVolumeId())));
        b.key(ControllerGrpc.getControllerPublishVolumeMethod(), (ControllerPublishVolumeRequest r) -> List.of(volume(r.getVolumeId())));
        b.key(ControllerGrpc.getControllerUnpublishVolumeMethod(), (ControllerUnpublishVolumeRequest r) -> List.of(volume(r.getVolumeId())));
        b.key(ControllerGrpc.getControllerExpandVolumeMethod(), (ControllerExpandVolumeRequest r) -> List.of(volume(r.getVolumeId())));
        b.key(ControllerGrpc.getControllerModifyVolumeMethod(), (ControllerModifyVolumeRequest r) -> List.of(volume(r.getVolumeId())));
        b.key(ControllerGrpc.getCreateSnapshotMethod(), (CreateSnapshotRequest r) -> List.of(snapshotName(r.getName())));
        b.key(ControllerGrpc.getDeleteSnapshotMethod(), (DeleteSnapshotRequest r) -> List.of(snapshot(r.getSnapshotId())));

        b.key(GroupControllerGrpc.getCreateVolumeGroupSnapshotMethod(),
                (CreateVolumeGroupSnapshotRequest r) -> List.of(groupSnapshotName(r.getName())));
        b.key(GroupControllerGrpc.getDeleteVolumeGroupSnapshotMethod(),
                (DeleteVolumeGroupSnapshotRequest r) -> List.of(groupSnapshot(r.getGroupSnapshotId())));

        b.key(NodeGrpc.getNodeStageVolumeMethod(), (NodeStageVolumeRequest r) -> List.of(nodeVolume(r.getVolumeId())));
        b.key(NodeGrpc.getNodeUnstageVolumeMethod(), (NodeUnstageVolumeRequest r) -> List.of(nodeVolume(r.getVolumeId())));
        b.key(NodeGrpc.getNodePublishVolumeMethod(), (NodePublishVolumeRequest r) -> List.of(nodeVolume(r.getVolumeId())));
        b.key(NodeGrpc.getNodeUnpublishVolumeMethod(), (NodeUnpublishVolumeRequest r) -> List.of(nodeVolume(r.getVolumeId())));
        b.key(NodeGrpc.getNodeExpandVolumeMethod(), (NodeExpandVolumeRequest r) -> List.of(nodeVolume(r.getVolumeId())));

        b.key(io.csi4j.proto.addons.volumegroup.ControllerGrpc.getCreateVolumeGroupMethod(),
                (CreateVolumeGroupRequest r) -> {
                    List<String> keys = new ArrayList<>();
                    keys.add(volumeGroupName(r.getName()));
                    r.getVolumeIdsList().forEach(id -> keys.add(volume(id)));   // no DeleteVolume of a volume being grouped
                    return keys;
                });
        // one reclaim per volume at a time (the CSI-Addons "operation pending" row answers ABORTED)
        b.key(ReclaimSpaceControllerGrpc.getControllerReclaimSpaceMethod(),
                (ControllerReclaimSpaceRequest r) -> List.of(volume(r.getVolumeId())));
        b.key(ReclaimSpaceNodeGrpc.getNodeReclaimSpaceMethod(),
                (NodeReclaimSpaceRequest r) -> List.of(nodeVolume(r.getVolumeId())));
        // one replication change per volume at a time, and none during a publish of it (CSI-Addons: ABORTED)
        b.key(io.csi4j.proto.addons.replication.ControllerGrpc.getEnableVolumeReplicationMethod(),
                (io.csi4j.proto.addons.replication.EnableVolumeReplicationRequest r) -> replicated(r.getVolumeId(), r.getReplicationSource()));
        b.key(io.csi4j.proto.addons.replication.ControllerGrpc.getDisableVolumeReplicationMethod(),
                (io.csi4j.proto.addons.replication.DisableVolumeReplicationRequest r) -> replicated(r.getVolumeId(), r.getReplicationSource()));
        b.key(io.csi4j.proto.addons.replication.ControllerGrpc.getPromoteVolumeMethod(),
                (io.csi4j.proto.addons.replication.PromoteVolumeRequest r) -> replicated(r.getVolumeId(), r.getReplicationSource()));
        b.key(io.csi4j.proto.addons.replication.ControllerGrpc.getDemoteVolumeMethod(),
                (io.csi4j.proto.addons.replication.DemoteVolumeRequest r) -> replicated(r.getVolumeId(), r.getReplicationSource()));
        b.key(io.csi4j.proto.addons.replication.ControllerGrpc.getResyncVolumeMethod(),
                (io.csi4j.proto.addons.replication.ResyncVolumeRequest r) -> replicated(r.getVolumeId(), r.getReplicationSource()));
        b.key(io.csi4j.proto.addons.volumegroup.ControllerGrpc.getDeleteVolumeGroupMethod(),
                (DeleteVolumeGroupRequest r) -> List.of(volumeGroup(r.getVolumeGroupId())));
        b.key(io.csi4j.proto.addons.volumegroup.ControllerGrpc.getModifyVolumeGroupMembershipMethod(),
                (ModifyVolumeGroupMembershipRequest r) -> {
                    List<String> keys = new ArrayList<>();
                    keys.add(volumeGroup(r.getVolumeGroupId()));
                    r.getVolumeIdsList().forEach(id -> keys.add(volume(id)));
                    return keys;
                });
    }

    /** The volume a replication request names (its source's, else the deprecated volume_id); none: no key. */
    private static List<String> replicated(String volumeId, io.csi4j.proto.addons.replication.ReplicationSource source) {
        String id = source.hasVolume() && !source.getVolume().getVolumeId().isEmpty() ? source.getVolume().getVolumeId() : volumeId;
        return id.isEmpty() ? List.of() : List.of(volume(id));
    }
}
