package io.csi4j.cli.call;

import static io.csi4j.cli.call.ControllerCommand.orEmpty;

import io.csi4j.cli.output.View;
import io.csi4j.proto.csi.*;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code csi4j group}: the CSI GroupController service (volume group snapshots). */
@Command(name = "group", description = "CSI GroupController: write-order consistent snapshots of several volumes.")
public final class GroupCommand {
    private static final String MEMBERS = "A member snapshot (repeatable; the spec requires the full list). "
            + "Default: found through ListSnapshots by group_snapshot_id";

    @Command(name = "caps", description = "GroupControllerGetCapabilities.")
    int caps(@Mixin ClientOptions client) {
        try (var s = client.csi()) {
            client.output().show(s.group().groupControllerGetCapabilities(GroupControllerGetCapabilitiesRequest.getDefaultInstance()));
        }
        return 0;
    }

    @Command(name = "create-snapshot", description = "CreateVolumeGroupSnapshot NAME --source-volume-id ID...")
    int createSnapshot(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
                       @Parameters(paramLabel = "NAME", description = "The group snapshot's name (the idempotency key)") String name,
                       @Option(names = "--source-volume-id", required = true, paramLabel = "ID", description = "A volume to snapshot (repeatable)") List<String> sources,
                       @Option(names = "--param", paramLabel = "KEY=VALUE", description = "A VolumeGroupSnapshotClass parameter (repeatable)") Map<String, String> params) {
        var req = CreateVolumeGroupSnapshotRequest.newBuilder().setName(name).addAllSourceVolumeIds(sources)
                .putAllParameters(orEmpty(params)).putAllSecrets(secrets.secrets());
        try (var s = client.csi()) {
            client.output().show(s.group().createVolumeGroupSnapshot(req.build()));
        }
        return 0;
    }

    @Command(name = "get-snapshot", description = "GetVolumeGroupSnapshot GROUP_SNAPSHOT_ID.")
    int getSnapshot(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
                    @Parameters(paramLabel = "GROUP_SNAPSHOT_ID") String groupId,
                    @Option(names = "--snapshot-id", paramLabel = "ID", description = MEMBERS) List<String> members) {
        try (var s = client.csi()) {
            var req = GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(groupId)
                    .addAllSnapshotIds(members(s, groupId, members)).putAllSecrets(secrets.secrets());
            client.output().show(s.group().getVolumeGroupSnapshot(req.build()));
        }
        return 0;
    }

    @Command(name = "delete-snapshot", description = "DeleteVolumeGroupSnapshot GROUP_SNAPSHOT_ID (and its member snapshots).")
    int deleteSnapshot(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
                       @Parameters(paramLabel = "GROUP_SNAPSHOT_ID") String groupId,
                       @Option(names = "--snapshot-id", paramLabel = "ID", description = MEMBERS) List<String> members) {
        try (var s = client.csi()) {
            var req = DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(groupId)
                    .addAllSnapshotIds(members(s, groupId, members)).putAllSecrets(secrets.secrets());
            var r = s.group().deleteVolumeGroupSnapshot(req.build());
            client.output().show(r, View.line("deleted group snapshot " + groupId));
        }
        return 0;
    }

    /** The member snapshot ids given, else those ListSnapshots reports with this group_snapshot_id. */
    private static List<String> members(Session s, String groupId, List<String> given) {
        if (given != null && !given.isEmpty()) return given;
        return ControllerCommand.listSnapshots(s, null, null, 0, null, true, Map.of()).getEntriesList().stream()
                .map(ListSnapshotsResponse.Entry::getSnapshot)
                .filter(snap -> snap.getGroupSnapshotId().equals(groupId))
                .map(Snapshot::getSnapshotId).toList();
    }
}
