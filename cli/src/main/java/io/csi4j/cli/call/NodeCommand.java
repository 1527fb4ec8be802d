package io.csi4j.cli.call;

import static io.csi4j.cli.call.ControllerCommand.orEmpty;

import io.csi4j.cli.ByteSize;
import io.csi4j.cli.output.View;
import io.csi4j.proto.csi.*;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code csi4j node}: every RPC of the CSI Node service. Relative paths are made absolute here. */
@Command(name = "node", description = "CSI Node: stage and publish volumes on this node, stats, expansion, node info.")
public final class NodeCommand {
    private static final String CAP = "Volume capability MODE,mount|block[,FSTYPE[,FLAGS]], e.g. SINGLE_NODE_WRITER,mount,ext4,noatime. Default: "
            + CapabilityConverter.DEFAULT;

    @Command(name = "stage", description = "NodeStageVolume VOLUME_ID --staging-path DIR: attach and mount at the node's staging path.")
    int stage(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
              @Parameters(paramLabel = "VOLUME_ID") String volumeId,
              @Option(names = "--staging-path", required = true, paramLabel = "DIR", description = "The staging target path") Path staging,
              @Option(names = "--cap", paramLabel = "CAP", converter = CapabilityConverter.class, description = CAP) VolumeCapability cap,
              @Option(names = "--mount-group", paramLabel = "GID", description = "volume_mount_group (fsGroup)") String mountGroup,
              @Option(names = "--publish-context", paramLabel = "KEY=VALUE", description = "From controller publish (repeatable)") Map<String, String> publishContext,
              @Option(names = "--volume-context", paramLabel = "KEY=VALUE", description = "From create-volume (repeatable)") Map<String, String> context) {
        var req = NodeStageVolumeRequest.newBuilder().setVolumeId(volumeId).setStagingTargetPath(absolute(staging))
                .setVolumeCapability(capability(cap, mountGroup)).putAllPublishContext(orEmpty(publishContext))
                .putAllVolumeContext(orEmpty(context)).putAllSecrets(secrets.secrets());
        try (var s = client.csi()) {
            var r = s.node().nodeStageVolume(req.build());
            client.output().show(r, View.line("staged volume " + volumeId + " at " + absolute(staging)));
        }
        return 0;
    }

    @Command(name = "unstage", description = "NodeUnstageVolume VOLUME_ID --staging-path DIR.")
    int unstage(@Mixin ClientOptions client,
                @Parameters(paramLabel = "VOLUME_ID") String volumeId,
                @Option(names = "--staging-path", required = true, paramLabel = "DIR", description = "The staging target path") Path staging) {
        try (var s = client.csi()) {
            var r = s.node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(volumeId)
                    .setStagingTargetPath(absolute(staging)).build());
            client.output().show(r, View.line("unstaged volume " + volumeId + " from " + absolute(staging)));
        }
        return 0;
    }

    @Command(name = "publish", description = "NodePublishVolume VOLUME_ID --target-path PATH [--staging-path DIR]: mount where the workload sees it.")
    int publish(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
                @Parameters(paramLabel = "VOLUME_ID") String volumeId,
                @Option(names = "--target-path", required = true, paramLabel = "PATH", description = "Where to publish") Path target,
                @Option(names = "--staging-path", paramLabel = "DIR", description = "Where the volume was staged") Path staging,
                @Option(names = "--cap", paramLabel = "CAP", converter = CapabilityConverter.class, description = CAP) VolumeCapability cap,
                @Option(names = "--mount-group", paramLabel = "GID", description = "volume_mount_group (fsGroup)") String mountGroup,
                @Option(names = "--readonly", description = "Publish read-only") boolean readonly,
                @Option(names = "--publish-context", paramLabel = "KEY=VALUE", description = "From controller publish (repeatable)") Map<String, String> publishContext,
                @Option(names = "--volume-context", paramLabel = "KEY=VALUE", description = "From create-volume (repeatable)") Map<String, String> context) {
        var req = NodePublishVolumeRequest.newBuilder().setVolumeId(volumeId).setTargetPath(absolute(target))
                .setVolumeCapability(capability(cap, mountGroup)).setReadonly(readonly)
                .putAllPublishContext(orEmpty(publishContext)).putAllVolumeContext(orEmpty(context)).putAllSecrets(secrets.secrets());
        if (staging != null) req.setStagingTargetPath(absolute(staging));
        try (var s = client.csi()) {
            var r = s.node().nodePublishVolume(req.build());
            client.output().show(r, View.line("published volume " + volumeId + " at " + absolute(target) + (readonly ? " (read-only)" : "")));
        }
        return 0;
    }

    @Command(name = "unpublish", description = "NodeUnpublishVolume VOLUME_ID --target-path PATH.")
    int unpublish(@Mixin ClientOptions client,
                  @Parameters(paramLabel = "VOLUME_ID") String volumeId,
                  @Option(names = "--target-path", required = true, paramLabel = "PATH", description = "Where it is published") Path target) {
        try (var s = client.csi()) {
            var r = s.node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(volumeId)
                    .setTargetPath(absolute(target)).build());
            client.output().show(r, View.line("unpublished volume " + volumeId + " from " + absolute(target)));
        }
        return 0;
    }

    @Command(name = "stats", description = "NodeGetVolumeStats VOLUME_ID --volume-path PATH: bytes and inodes, condition.")
    int stats(@Mixin ClientOptions client,
              @Parameters(paramLabel = "VOLUME_ID") String volumeId,
              @Option(names = "--volume-path", required = true, paramLabel = "PATH", description = "Where the volume is staged or published") Path path,
              @Option(names = "--staging-path", paramLabel = "DIR", description = "Where it is staged") Path staging) {
        var req = NodeGetVolumeStatsRequest.newBuilder().setVolumeId(volumeId).setVolumePath(absolute(path));
        if (staging != null) req.setStagingTargetPath(absolute(staging));
        try (var s = client.csi()) {
            client.output().show(s.node().nodeGetVolumeStats(req.build()));
        }
        return 0;
    }

    @Command(name = "expand", description = "NodeExpandVolume VOLUME_ID --volume-path PATH: grow the filesystem after controller expand.")
    int expand(@Mixin ClientOptions client, @Mixin SecretOptions secrets,
               @Parameters(paramLabel = "VOLUME_ID") String volumeId,
               @Option(names = "--volume-path", required = true, paramLabel = "PATH", description = "Where the volume is published or staged") Path path,
               @Option(names = "--staging-path", paramLabel = "DIR", description = "Where it is staged") Path staging,
               @Option(names = "--required-bytes", paramLabel = "SIZE", converter = ByteSize.class, description = "New size, at least") Long required,
               @Option(names = "--limit-bytes", paramLabel = "SIZE", converter = ByteSize.class, description = "New size, at most") Long limit,
               @Option(names = "--cap", paramLabel = "CAP", converter = CapabilityConverter.class, description = "The capability it is used with") VolumeCapability cap) {
        var req = NodeExpandVolumeRequest.newBuilder().setVolumeId(volumeId).setVolumePath(absolute(path)).putAllSecrets(secrets.secrets());
        if (staging != null) req.setStagingTargetPath(absolute(staging));
        ControllerCommand.range(required, limit).ifPresent(req::setCapacityRange);
        if (cap != null) req.setVolumeCapability(cap);
        try (var s = client.csi()) {
            client.output().show(s.node().nodeExpandVolume(req.build()));
        }
        return 0;
    }

    @Command(name = "caps", description = "NodeGetCapabilities.")
    int caps(@Mixin ClientOptions client) {
        try (var s = client.csi()) {
            client.output().show(s.node().nodeGetCapabilities(NodeGetCapabilitiesRequest.getDefaultInstance()));
        }
        return 0;
    }

    @Command(name = "info", description = "NodeGetInfo: node id, volume limit, topology.")
    int info(@Mixin ClientOptions client) {
        try (var s = client.csi()) {
            client.output().show(s.node().nodeGetInfo(NodeGetInfoRequest.getDefaultInstance()));
        }
        return 0;
    }

    private static VolumeCapability capability(VolumeCapability cap, String mountGroup) {
        return CapabilityConverter.withMountGroup(CapabilityConverter.orDefault(cap == null ? null : List.of(cap)).getFirst(), mountGroup);
    }

    static String absolute(Path p) {
        return p.toAbsolutePath().normalize().toString();
    }
}
