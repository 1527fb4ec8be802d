package io.csi4j.cli.call;

import io.csi4j.cli.ByteSize;
import io.csi4j.cli.output.View;
import io.csi4j.proto.csi.*;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import java.util.Optional;
import java.util.TreeMap;

/** {@code csi4j controller}: every RPC of the CSI Controller service. */
@Command(name = "controller", description = "CSI Controller: volumes, snapshots, publication to nodes, capacity.")
public final class ControllerCommand {
    private static final String CAP = "Volume capability MODE,mount|block[,FSTYPE[,FLAGS]] (repeatable), e.g. "
            + "SINGLE_NODE_WRITER,mount,ext4 or RWOP,block. Default: " + CapabilityConverter.DEFAULT;

    @Command(name = "create-volume", description = "CreateVolume NAME (idempotent by name): empty, from a snapshot or cloned from a volume.")
    int createVolume(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
                     @Parameters(paramLabel = "NAME", description = "The volume's name (the idempotency key)") String name,
                     @Option(names = "--cap", paramLabel = "CAP", converter = CapabilityConverter.class, description = CAP) List<VolumeCapability> caps,
                     @Option(names = "--required-bytes", paramLabel = "SIZE", converter = ByteSize.class, description = "At least this size, e.g. 10Gi") Long required,
                     @Option(names = "--limit-bytes", paramLabel = "SIZE", converter = ByteSize.class, description = "At most this size") Long limit,
                     @Option(names = "--param", paramLabel = "KEY=VALUE", description = "A StorageClass parameter (repeatable)") Map<String, String> params,
                     @Option(names = "--mutable-param", paramLabel = "KEY=VALUE", description = "A mutable parameter (repeatable)") Map<String, String> mutable,
                     @Option(names = "--snapshot-id", paramLabel = "ID", description = "Restore from this snapshot") String snapshotId,
                     @Option(names = "--source-volume-id", paramLabel = "ID", description = "Clone this volume") String sourceVolumeId,
                     @Option(names = "--topology", paramLabel = "KEY=VALUE[,KEY=VALUE]",
                             description = "An accessible topology, requisite and preferred (repeatable), e.g. topology.csi4j.io/node=n1")
                     List<String> topologies) {
        if (snapshotId != null && sourceVolumeId != null) {
            throw new IllegalArgumentException("--snapshot-id and --source-volume-id exclude each other");
        }
        var req = CreateVolumeRequest.newBuilder().setName(name)
                .addAllVolumeCapabilities(CapabilityConverter.orDefault(caps))
                .putAllParameters(orEmpty(params)).putAllMutableParameters(orEmpty(mutable)).putAllSecrets(secrets.secrets());
        range(required, limit).ifPresent(req::setCapacityRange);
        if (snapshotId != null) {
            req.setVolumeContentSource(VolumeContentSource.newBuilder()
                    .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snapshotId)));
        }
        if (sourceVolumeId != null) {
            req.setVolumeContentSource(VolumeContentSource.newBuilder()
                    .setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(sourceVolumeId)));
        }
        if (topologies != null && !topologies.isEmpty()) {
            var t = TopologyRequirement.newBuilder();
            for (String segments : topologies) {
                Topology topology = topology(segments);
                t.addRequisite(topology).addPreferred(topology);
            }
            req.setAccessibilityRequirements(t);
        }
        try (var s = client.csi()) {
            CreateVolumeRequest request = req.build();
            // a restore or clone may be a copy onto another node: its progress said, waited for as long as it advances
            client.output().show(request.hasVolumeContentSource() ? CopyWait.create(s, request, client.timeout(), client.err())
                    : s.controller().createVolume(request));
        }
        return 0;
    }

    @Command(name = "delete-volume", description = "DeleteVolume VOLUME_ID (a missing volume: 'not found (nothing to delete)', exit 0).")
    int deleteVolume(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
                     @Parameters(paramLabel = "VOLUME_ID") String volumeId) {
        try (var s = client.csi()) {
            Lookup before = Lookup.of(() -> s.controller().controllerGetVolume(
                    ControllerGetVolumeRequest.newBuilder().setVolumeId(volumeId).build()) != null);
            var r = s.controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(volumeId).putAllSecrets(secrets.secrets()).build());
            client.output().show(r, View.line(before.deleted("volume " + volumeId)));
        }
        return 0;
    }

    @Command(name = "publish", description = "ControllerPublishVolume VOLUME_ID --node-id NODE: make a volume available on a node.")
    int publish(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
                @Parameters(paramLabel = "VOLUME_ID") String volumeId,
                @Option(names = "--node-id", required = true, paramLabel = "NODE", description = "The node (from node info)") String nodeId,
                @Option(names = "--cap", paramLabel = "CAP", converter = CapabilityConverter.class, description = CAP) VolumeCapability cap,
                @Option(names = "--readonly", description = "Publish read-only") boolean readonly,
                @Option(names = "--volume-context", paramLabel = "KEY=VALUE", description = "From create-volume (repeatable)") Map<String, String> context) {
        var req = ControllerPublishVolumeRequest.newBuilder().setVolumeId(volumeId).setNodeId(nodeId)
                .setVolumeCapability(CapabilityConverter.orDefault(cap == null ? null : List.of(cap)).getFirst())
                .setReadonly(readonly).putAllVolumeContext(orEmpty(context)).putAllSecrets(secrets.secrets());
        try (var s = client.csi()) {
            client.output().show(s.controller().controllerPublishVolume(req.build()));
        }
        return 0;
    }

    @Command(name = "unpublish", description = "ControllerUnpublishVolume VOLUME_ID [--node-id NODE] (all nodes without --node-id).")
    int unpublish(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
                  @Parameters(paramLabel = "VOLUME_ID") String volumeId,
                  @Option(names = "--node-id", paramLabel = "NODE", description = "The node; default: every node") String nodeId) {
        var req = ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(volumeId).putAllSecrets(secrets.secrets());
        if (nodeId != null) req.setNodeId(nodeId);
        try (var s = client.csi()) {
            var r = s.controller().controllerUnpublishVolume(req.build());
            client.output().show(r, View.line("unpublished volume " + volumeId + (nodeId == null ? " from every node" : " from node " + nodeId)));
        }
        return 0;
    }

    @Command(name = "validate", description = "ValidateVolumeCapabilities VOLUME_ID: does the volume support these capabilities? Exits 1 if not.")
    int validate(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
                 @Parameters(paramLabel = "VOLUME_ID") String volumeId,
                 @Option(names = "--cap", paramLabel = "CAP", converter = CapabilityConverter.class, description = CAP) List<VolumeCapability> caps,
                 @Option(names = "--param", paramLabel = "KEY=VALUE", description = "A parameter (repeatable)") Map<String, String> params,
                 @Option(names = "--mutable-param", paramLabel = "KEY=VALUE", description = "A mutable parameter (repeatable)") Map<String, String> mutable,
                 @Option(names = "--volume-context", paramLabel = "KEY=VALUE", description = "From create-volume (repeatable)") Map<String, String> context) {
        var req = ValidateVolumeCapabilitiesRequest.newBuilder().setVolumeId(volumeId)
                .addAllVolumeCapabilities(CapabilityConverter.orDefault(caps)).putAllParameters(orEmpty(params))
                .putAllMutableParameters(orEmpty(mutable)).putAllVolumeContext(orEmpty(context)).putAllSecrets(secrets.secrets());
        try (var s = client.csi()) {
            var r = s.controller().validateVolumeCapabilities(req.build());
            client.output().show(r);
            return r.hasConfirmed() ? 0 : 1;
        }
    }

    @Command(name = "list-volumes", description = "ListVolumes: one page, or every page with --paging.")
    int listVolumes(@Mixin ClientOptions client,
                    @Option(names = "--max-entries", paramLabel = "N", defaultValue = "0", description = "Page size; 0 lets the plugin choose") int maxEntries,
                    @Option(names = "--starting-token", paramLabel = "TOKEN", description = "Continue from this next_token") String token,
                    @Option(names = "--paging", description = "Follow next_token to the last page") boolean paging) {
        try (var s = client.csi()) {
            var pages = Paging.pages(token, paging, t -> s.controller().listVolumes(
                    ListVolumesRequest.newBuilder().setMaxEntries(maxEntries).setStartingToken(t).build()),
                    ListVolumesResponse::getNextToken);
            var all = ListVolumesResponse.newBuilder();
            pages.forEach(p -> all.addAllEntries(p.getEntriesList()));
            all.setNextToken(pages.getLast().getNextToken());
            client.output().show(all.build());
        }
        return 0;
    }

    @Command(name = "get-volume", description = "ControllerGetVolume VOLUME_ID: capacity, publications, condition.")
    int getVolume(@Mixin ClientOptions client, @Parameters(paramLabel = "VOLUME_ID") String volumeId) {
        try (var s = client.csi()) {
            client.output().show(s.controller().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(volumeId).build()));
        }
        return 0;
    }

    @Command(name = "capacity", description = "GetCapacity: free capacity for volumes with these capabilities and parameters.")
    int capacity(@Mixin ClientOptions client,
                 @Option(names = "--cap", paramLabel = "CAP", converter = CapabilityConverter.class,
                         description = "Volume capability MODE,mount|block[,FSTYPE[,FLAGS]] (repeatable); default: none") List<VolumeCapability> caps,
                 @Option(names = "--param", paramLabel = "KEY=VALUE", description = "A StorageClass parameter (repeatable)") Map<String, String> params,
                 @Option(names = "--topology", paramLabel = "KEY=VALUE[,KEY=VALUE]", description = "Capacity in this topology segment") String topology) {
        var req = GetCapacityRequest.newBuilder().addAllVolumeCapabilities(caps == null ? List.of() : caps).putAllParameters(orEmpty(params));
        if (topology != null) req.setAccessibleTopology(topology(topology));
        try (var s = client.csi()) {
            client.output().show(s.controller().getCapacity(req.build()));
        }
        return 0;
    }

    @Command(name = "caps", description = "ControllerGetCapabilities.")
    int caps(@Mixin ClientOptions client) {
        try (var s = client.csi()) {
            client.output().show(s.controller().controllerGetCapabilities(ControllerGetCapabilitiesRequest.getDefaultInstance()));
        }
        return 0;
    }

    @Command(name = "expand", description = "ControllerExpandVolume VOLUME_ID --required-bytes SIZE.")
    int expand(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
               @Parameters(paramLabel = "VOLUME_ID") String volumeId,
               @Option(names = "--required-bytes", required = true, paramLabel = "SIZE", converter = ByteSize.class, description = "New size, at least") Long required,
               @Option(names = "--limit-bytes", paramLabel = "SIZE", converter = ByteSize.class, description = "New size, at most") Long limit,
               @Option(names = "--cap", paramLabel = "CAP", converter = CapabilityConverter.class, description = "The capability the volume is used with") VolumeCapability cap) {
        var req = ControllerExpandVolumeRequest.newBuilder().setVolumeId(volumeId).putAllSecrets(secrets.secrets());
        range(required, limit).ifPresent(req::setCapacityRange);
        if (cap != null) req.setVolumeCapability(cap);
        try (var s = client.csi()) {
            client.output().show(s.controller().controllerExpandVolume(req.build()));
        }
        return 0;
    }

    @Command(name = "modify", description = "ControllerModifyVolume VOLUME_ID --mutable-param KEY=VALUE...")
    int modify(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
               @Parameters(paramLabel = "VOLUME_ID") String volumeId,
               @Option(names = "--mutable-param", required = true, paramLabel = "KEY=VALUE", description = "A mutable parameter (repeatable)") Map<String, String> mutable) {
        var req = ControllerModifyVolumeRequest.newBuilder().setVolumeId(volumeId).putAllMutableParameters(mutable).putAllSecrets(secrets.secrets());
        try (var s = client.csi()) {
            var r = s.controller().controllerModifyVolume(req.build());
            client.output().show(r, View.line("modified volume " + volumeId + ": " + new TreeMap<>(mutable)));
        }
        return 0;
    }

    @Command(name = "create-snapshot", description = "CreateSnapshot NAME --source-volume-id ID (idempotent by name).")
    int createSnapshot(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
                       @Parameters(paramLabel = "NAME", description = "The snapshot's name (the idempotency key)") String name,
                       @Option(names = "--source-volume-id", required = true, paramLabel = "ID", description = "The volume to snapshot") String source,
                       @Option(names = "--param", paramLabel = "KEY=VALUE", description = "A VolumeSnapshotClass parameter (repeatable)") Map<String, String> params) {
        var req = CreateSnapshotRequest.newBuilder().setName(name).setSourceVolumeId(source)
                .putAllParameters(orEmpty(params)).putAllSecrets(secrets.secrets());
        try (var s = client.csi()) {
            client.output().show(s.controller().createSnapshot(req.build()));
        }
        return 0;
    }

    @Command(name = "delete-snapshot", description = "DeleteSnapshot SNAPSHOT_ID (a missing snapshot: 'not found (nothing to delete)', exit 0).")
    int deleteSnapshot(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
                       @Parameters(paramLabel = "SNAPSHOT_ID") String snapshotId) {
        try (var s = client.csi()) {
            Lookup before = Lookup.of(() -> s.controller().listSnapshots(ListSnapshotsRequest.newBuilder()
                    .setSnapshotId(snapshotId).putAllSecrets(secrets.secrets()).build()).getEntriesCount() > 0);
            var r = s.controller().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(snapshotId).putAllSecrets(secrets.secrets()).build());
            client.output().show(r, View.line(before.deleted("snapshot " + snapshotId)));
        }
        return 0;
    }

    @Command(name = "list-snapshots", description = "ListSnapshots, optionally of one source volume or one snapshot id.")
    int listSnapshots(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
                      @Option(names = "--snapshot-id", paramLabel = "ID", description = "Only this snapshot") String snapshotId,
                      @Option(names = "--source-volume-id", paramLabel = "ID", description = "Only snapshots of this volume") String source,
                      @Option(names = "--max-entries", paramLabel = "N", defaultValue = "0", description = "Page size; 0 lets the plugin choose") int maxEntries,
                      @Option(names = "--starting-token", paramLabel = "TOKEN", description = "Continue from this next_token") String token,
                      @Option(names = "--paging", description = "Follow next_token to the last page") boolean paging) {
        try (var s = client.csi()) {
            var all = listSnapshots(s, snapshotId, source, maxEntries, token, paging, secrets.secrets());
            client.output().show(all);
        }
        return 0;
    }

    static ListSnapshotsResponse listSnapshots(Session s, String snapshotId, String source, int maxEntries, String token,
                                               boolean paging, Map<String, String> secrets) {
        var pages = Paging.pages(token, paging, t -> {
            var req = ListSnapshotsRequest.newBuilder().setMaxEntries(maxEntries).setStartingToken(t).putAllSecrets(secrets);
            if (snapshotId != null) req.setSnapshotId(snapshotId);
            if (source != null) req.setSourceVolumeId(source);
            return s.controller().listSnapshots(req.build());
        }, ListSnapshotsResponse::getNextToken);
        var all = ListSnapshotsResponse.newBuilder();
        pages.forEach(p -> all.addAllEntries(p.getEntriesList()));
        return all.setNextToken(pages.getLast().getNextToken()).build();
    }

    @Command(name = "get-snapshot", description = "GetSnapshot SNAPSHOT_ID.")
    int getSnapshot(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
                    @Parameters(paramLabel = "SNAPSHOT_ID") String snapshotId) {
        try (var s = client.csi()) {
            client.output().show(s.controller().getSnapshot(GetSnapshotRequest.newBuilder().setSnapshotId(snapshotId)
                    .putAllSecrets(secrets.secrets()).build()));
        }
        return 0;
    }

    // ---- request pieces shared with node commands ----

    static Optional<CapacityRange> range(Long required, Long limit) {
        if (required == null && limit == null) return Optional.empty();
        var r = CapacityRange.newBuilder();
        if (required != null) r.setRequiredBytes(required);
        if (limit != null) r.setLimitBytes(limit);
        return Optional.of(r.build());
    }

    static Topology topology(String segments) {
        var t = Topology.newBuilder();
        for (String pair : segments.split(",")) {
            int eq = pair.indexOf('=');
            if (eq <= 0) throw new IllegalArgumentException("topology segment '" + pair + "' is not KEY=VALUE");
            t.putSegments(pair.substring(0, eq).strip(), pair.substring(eq + 1).strip());
        }
        return t.build();
    }

    static Map<String, String> orEmpty(Map<String, String> map) {
        return map == null ? Map.of() : new LinkedHashMap<>(map);
    }

    static <T> List<T> orEmpty(List<T> list) {
        return list == null ? List.of() : new ArrayList<>(list);
    }
}
