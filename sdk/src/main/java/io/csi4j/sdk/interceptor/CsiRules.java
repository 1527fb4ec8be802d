package io.csi4j.sdk.interceptor;

import com.google.protobuf.Descriptors.FileDescriptor;
import io.csi4j.proto.addons.identity.IdentityProto;
import io.csi4j.proto.addons.reclaimspace.ReclaimSpaceProto;
import io.csi4j.proto.addons.replication.ReplicationProto;
import io.csi4j.proto.addons.volumegroup.VolumeGroupProto;
import io.csi4j.proto.csi.CsiProto;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The spec's field requirements as data, transcribed by hand from the spec text: csi.v1 from
 * csi-spec v1.13 ("This field is REQUIRED" in each message's comments), volumegroup from the CSI-Addons
 * VolumeGroup spec. Every RPC has an entry, also when nothing in it is REQUIRED.
 *
 * <p>Scalars that proto3 cannot tell from their default (bool, integers) are listed where the spec says
 * REQUIRED, for completeness, but cannot be checked: {@code readonly = false} is a valid value on the wire.
 */
final class CsiRules {
    private CsiRules() {}

    /** REQUIRED fields of one RPC's request and response message. */
    record Rpc(String method, List<String> request, List<String> response) {}

    /** Rules of a message that appears inside requests or responses. */
    record Nested(String message, List<String> required, List<String> requiredOneofs, List<String> atLeastOneOf) {}

    private static Rpc rpc(String method, List<String> request, List<String> response) {
        return new Rpc(method, request, response);
    }

    private static List<String> f(String... fields) {
        return List.of(fields);
    }

    private static final List<String> NONE = List.of();

    /** The .proto files these rules are about: a service added to them brings its rules here, and its file. */
    static final List<FileDescriptor> FILES = List.of(CsiProto.getDescriptor(), IdentityProto.getDescriptor(),
            VolumeGroupProto.getDescriptor(), ReclaimSpaceProto.getDescriptor(), ReplicationProto.getDescriptor());

    static final List<Rpc> RPCS = List.of(
            // Identity
            rpc("csi.v1.Identity/GetPluginInfo", NONE, f("name", "vendor_version")),
            rpc("csi.v1.Identity/GetPluginCapabilities", NONE, NONE),
            rpc("csi.v1.Identity/Probe", NONE, NONE),
            // Controller
            rpc("csi.v1.Controller/CreateVolume", f("name", "volume_capabilities"), f("volume")),
            rpc("csi.v1.Controller/DeleteVolume", f("volume_id"), NONE),
            rpc("csi.v1.Controller/ControllerPublishVolume", f("volume_id", "node_id", "volume_capability", "readonly"), NONE),
            rpc("csi.v1.Controller/ControllerUnpublishVolume", f("volume_id"), NONE),
            rpc("csi.v1.Controller/ValidateVolumeCapabilities", f("volume_id", "volume_capabilities"), NONE),
            rpc("csi.v1.Controller/ListVolumes", NONE, NONE),
            rpc("csi.v1.Controller/GetCapacity", NONE, f("available_capacity")),
            rpc("csi.v1.Controller/ControllerGetCapabilities", NONE, NONE),
            rpc("csi.v1.Controller/CreateSnapshot", f("source_volume_id", "name"), f("snapshot")),
            rpc("csi.v1.Controller/DeleteSnapshot", f("snapshot_id"), NONE),
            rpc("csi.v1.Controller/ListSnapshots", NONE, NONE),
            rpc("csi.v1.Controller/ControllerExpandVolume", f("volume_id", "capacity_range"), f("capacity_bytes", "node_expansion_required")),
            rpc("csi.v1.Controller/ControllerGetVolume", f("volume_id"), f("volume", "status")),
            rpc("csi.v1.Controller/ControllerModifyVolume", f("volume_id", "mutable_parameters"), NONE),
            rpc("csi.v1.Controller/GetSnapshot", f("snapshot_id"), f("snapshot")),
            // GroupController
            rpc("csi.v1.GroupController/GroupControllerGetCapabilities", NONE, NONE),
            rpc("csi.v1.GroupController/CreateVolumeGroupSnapshot", f("name", "source_volume_ids"), f("group_snapshot")),
            rpc("csi.v1.GroupController/DeleteVolumeGroupSnapshot", f("group_snapshot_id", "snapshot_ids"), NONE),
            rpc("csi.v1.GroupController/GetVolumeGroupSnapshot", f("group_snapshot_id", "snapshot_ids"), f("group_snapshot")),
            // SnapshotMetadata (server streaming)
            rpc("csi.v1.SnapshotMetadata/GetMetadataAllocated", f("snapshot_id", "starting_offset"), f("block_metadata_type", "volume_capacity_bytes")),
            rpc("csi.v1.SnapshotMetadata/GetMetadataDelta", f("base_snapshot_id", "target_snapshot_id", "starting_offset"), f("block_metadata_type", "volume_capacity_bytes")),
            // Node
            rpc("csi.v1.Node/NodeStageVolume", f("volume_id", "staging_target_path", "volume_capability"), NONE),
            rpc("csi.v1.Node/NodeUnstageVolume", f("volume_id", "staging_target_path"), NONE),
            rpc("csi.v1.Node/NodePublishVolume", f("volume_id", "target_path", "volume_capability", "readonly"), NONE),
            rpc("csi.v1.Node/NodeUnpublishVolume", f("volume_id", "target_path"), NONE),
            rpc("csi.v1.Node/NodeGetVolumeStats", f("volume_id", "volume_path"), NONE),
            rpc("csi.v1.Node/NodeExpandVolume", f("volume_id", "volume_path"), NONE),
            rpc("csi.v1.Node/NodeGetCapabilities", NONE, NONE),
            rpc("csi.v1.Node/NodeGetInfo", NONE, f("node_id")),
            // CSI-Addons volumegroup
            rpc("volumegroup.Controller/CreateVolumeGroup", f("name"), f("volume_group")),
            rpc("volumegroup.Controller/ModifyVolumeGroupMembership", f("volume_group_id"), f("volume_group")),
            rpc("volumegroup.Controller/DeleteVolumeGroup", f("volume_group_id"), NONE),
            rpc("volumegroup.Controller/ListVolumeGroups", NONE, NONE),
            rpc("volumegroup.Controller/ControllerGetVolumeGroup", f("volume_group_id"), f("volume_group")),
            // CSI-Addons reclaimspace (its README and proto comments)
            rpc("reclaimspace.ReclaimSpaceController/ControllerReclaimSpace", f("volume_id"), NONE),
            rpc("reclaimspace.ReclaimSpaceNode/NodeReclaimSpace", f("volume_id", "volume_path"), NONE),
            // CSI-Addons replication (csi-addons/spec replication.proto): volume_id and replication_source are both
            // OPTIONAL on the wire (one names the volume; the service refuses a request naming none); REQUIRED in answers
            rpc("replication.Controller/EnableVolumeReplication", NONE, NONE),
            rpc("replication.Controller/DisableVolumeReplication", NONE, NONE),
            rpc("replication.Controller/PromoteVolume", NONE, NONE),
            rpc("replication.Controller/DemoteVolume", NONE, NONE),
            rpc("replication.Controller/ResyncVolume", NONE, f("ready")),
            rpc("replication.Controller/GetVolumeReplicationInfo", NONE, f("last_sync_time")),
            // CSI-Addons identity: the wire facts we have state no REQUIRED fields
            rpc("identity.Identity/GetIdentity", NONE, NONE),
            rpc("identity.Identity/GetCapabilities", NONE, NONE),
            rpc("identity.Identity/Probe", NONE, NONE));

    static final List<Nested> NESTED = List.of(
            new Nested("csi.v1.VolumeCapability", f("access_mode"), f("access_type"), NONE),
            new Nested("csi.v1.VolumeCapability.AccessMode", f("mode"), NONE, NONE),
            new Nested("csi.v1.VolumeContentSource", NONE, f("type"), NONE),
            new Nested("csi.v1.VolumeContentSource.SnapshotSource", f("snapshot_id"), NONE, NONE),
            new Nested("csi.v1.VolumeContentSource.VolumeSource", f("volume_id"), NONE, NONE),
            new Nested("csi.v1.CapacityRange", NONE, NONE, f("required_bytes", "limit_bytes")),
            new Nested("csi.v1.TopologyRequirement", NONE, NONE, f("requisite", "preferred")),
            new Nested("csi.v1.Volume", f("volume_id"), NONE, NONE),
            new Nested("csi.v1.Snapshot", f("snapshot_id", "source_volume_id", "creation_time", "ready_to_use"), NONE, NONE),
            new Nested("csi.v1.ValidateVolumeCapabilitiesResponse.Confirmed", f("volume_capabilities"), NONE, NONE),
            new Nested("csi.v1.ListVolumesResponse.Entry", f("volume"), NONE, NONE),
            new Nested("csi.v1.VolumeUsage", f("total", "unit"), NONE, NONE),
            new Nested("csi.v1.VolumeCondition", f("abnormal", "message"), NONE, NONE),
            new Nested("csi.v1.VolumeGroupSnapshot", f("group_snapshot_id", "snapshots", "creation_time", "ready_to_use"), NONE, NONE),
            new Nested("csi.v1.BlockMetadata", f("byte_offset", "size_bytes"), NONE, NONE),
            new Nested("volumegroup.VolumeGroup", f("volume_group_id"), NONE, NONE),
            new Nested("reclaimspace.StorageConsumption", f("usage_bytes"), NONE, NONE),
            new Nested("volumegroup.ListVolumeGroupsResponse.Entry", f("volume_group"), NONE, NONE),
            new Nested("replication.ReplicationSource", NONE, f("type"), NONE),
            new Nested("replication.ReplicationSource.VolumeSource", f("volume_id"), NONE, NONE),
            new Nested("replication.ReplicationSource.VolumeGroupSource", f("volume_group_id"), NONE, NONE),
            new Nested("replication.ReplicationSource.VolumeSnapshotSource", f("volume_snapshot_id"), NONE, NONE));

    /**
     * REQUIRED repeated and map fields that are not rejected when empty, by full field name, with the reason.
     * proto3 cannot tell an empty list or map from an absent one, so there REQUIRED binds the CO and cannot be
     * checked by the plugin without failing requests it can serve: where a plugin can act without the field it
     * is accepted empty (and still checked when given). A plugin that needs one of these lists checks it itself.
     * Every other REQUIRED repeated field stays enforced: a plugin cannot create or validate a volume without
     * capabilities, nor snapshot a group of no volumes, and a plugin's own answer is no CO request.
     */
    static final Map<String, String> REQUIRED_BUT_EMPTY_ACCEPTED = Map.of(
            "csi.v1.ControllerModifyVolumeRequest.mutable_parameters",
            "\"SPs MUST NOT modify volumes based on the absence of keys\": an empty map asks for no change, a no-op",
            "csi.v1.GetVolumeGroupSnapshotRequest.snapshot_ids",
            "\"If SP does not need to rely on this field ... it SHOULD check this field\": an SP that knows the members acts without it",
            "csi.v1.DeleteVolumeGroupSnapshotRequest.snapshot_ids",
            "\"If SP does not need to rely on this field ... it SHOULD check this field\": an SP that knows the members acts without it");

    /** General limits of the spec's "Size Limits" section. */
    static final int STRING_LIMIT = 128;
    static final int MAP_LIMIT = 4096;

    /** The spec allows paths "of the maximum path length allowed by the operating system" (Linux PATH_MAX). */
    private static final int PATH_LIMIT = 4096;
    /** NodeGetInfoResponse.node_id "SHALL NOT exceed 256 bytes"; COs pass that id back in these fields. */
    private static final int NODE_ID_LIMIT = 256;

    /** Per-field overrides of the string limit, by full field name; for repeated fields, per element. */
    static final Map<String, Integer> STRING_LIMIT_OVERRIDES = Map.ofEntries(
            Map.entry("csi.v1.NodeStageVolumeRequest.staging_target_path", PATH_LIMIT),
            Map.entry("csi.v1.NodeUnstageVolumeRequest.staging_target_path", PATH_LIMIT),
            Map.entry("csi.v1.NodePublishVolumeRequest.staging_target_path", PATH_LIMIT),
            Map.entry("csi.v1.NodePublishVolumeRequest.target_path", PATH_LIMIT),
            Map.entry("csi.v1.NodeUnpublishVolumeRequest.target_path", PATH_LIMIT),
            Map.entry("csi.v1.NodeGetVolumeStatsRequest.volume_path", PATH_LIMIT),
            Map.entry("csi.v1.NodeGetVolumeStatsRequest.staging_target_path", PATH_LIMIT),
            Map.entry("csi.v1.NodeExpandVolumeRequest.volume_path", PATH_LIMIT),
            Map.entry("csi.v1.NodeExpandVolumeRequest.staging_target_path", PATH_LIMIT),
            Map.entry("reclaimspace.NodeReclaimSpaceRequest.volume_path", PATH_LIMIT),
            Map.entry("reclaimspace.NodeReclaimSpaceRequest.staging_target_path", PATH_LIMIT),
            Map.entry("csi.v1.NodeGetInfoResponse.node_id", NODE_ID_LIMIT),
            Map.entry("csi.v1.ControllerPublishVolumeRequest.node_id", NODE_ID_LIMIT),
            Map.entry("csi.v1.ControllerUnpublishVolumeRequest.node_id", NODE_ID_LIMIT),
            Map.entry("csi.v1.ListVolumesResponse.VolumeStatus.published_node_ids", NODE_ID_LIMIT),
            Map.entry("csi.v1.ControllerGetVolumeResponse.VolumeStatus.published_node_ids", NODE_ID_LIMIT));

    /** Repeated strings limited as a whole ("The total size of this repeated field SHALL NOT exceed 4 KiB"). */
    static final Map<String, Integer> TOTAL_LIMITS = Map.of(
            "csi.v1.VolumeCapability.MountVolume.mount_flags", 4096);

    /** Names that must not contain the control characters U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, U+007F-U+009F. */
    static final Set<String> NO_CONTROL_CHARACTERS = Set.of(
            "csi.v1.CreateVolumeRequest.name",
            "csi.v1.CreateSnapshotRequest.name",
            "csi.v1.CreateVolumeGroupSnapshotRequest.name");

    /** "The value of this field MUST NOT be negative." */
    static final Set<String> NON_NEGATIVE = Set.of(
            "csi.v1.ListVolumesRequest.max_entries",
            "csi.v1.ListSnapshotsRequest.max_entries",
            "volumegroup.ListVolumeGroupsRequest.max_entries",
            "csi.v1.CapacityRange.required_bytes",
            "csi.v1.CapacityRange.limit_bytes",
            "csi.v1.Volume.capacity_bytes",
            "csi.v1.Snapshot.size_bytes",
            "csi.v1.GetCapacityResponse.available_capacity",
            "csi.v1.VolumeUsage.available",
            "csi.v1.VolumeUsage.total",
            "csi.v1.VolumeUsage.used",
            "csi.v1.NodeGetInfoResponse.max_volumes_per_node");
}
