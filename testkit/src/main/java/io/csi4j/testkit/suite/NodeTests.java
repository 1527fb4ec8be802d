package io.csi4j.testkit.suite;

import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME;
import static io.csi4j.proto.csi.NodeServiceCapability.RPC.Type.EXPAND_VOLUME;
import static io.csi4j.proto.csi.NodeServiceCapability.RPC.Type.GET_VOLUME_STATS;
import static io.csi4j.proto.csi.NodeServiceCapability.RPC.Type.STAGE_UNSTAGE_VOLUME;
import static io.csi4j.proto.csi.NodeServiceCapability.RPC.Type.VOLUME_CONDITION;
import static io.csi4j.testkit.suite.Verdicts.check;
import static io.csi4j.testkit.suite.Verdicts.fails;
import static io.csi4j.testkit.suite.Verdicts.ok;

import io.csi4j.proto.csi.NodeExpandVolumeRequest;
import io.csi4j.proto.csi.NodeGetCapabilitiesRequest;
import io.csi4j.proto.csi.NodeGetInfoRequest;
import io.csi4j.proto.csi.NodeGetInfoResponse;
import io.csi4j.proto.csi.NodeGetVolumeStatsRequest;
import io.csi4j.proto.csi.NodeGetVolumeStatsResponse;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeServiceCapability;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.proto.csi.PluginCapability;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.proto.csi.VolumeUsage;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.testkit.AccessType;

/** The Node service: capabilities, info, stage/unstage, publish/unpublish, stats, expansion. */
final class NodeTests {
    private NodeTests() {}

    /** Node tests with a volume need a controller that creates it. */
    static final Requirement VOLUMES = Requirement.controller(CREATE_DELETE_VOLUME);
    static final Requirement STAGING = VOLUMES.and(Requirement.node(STAGE_UNSTAGE_VOLUME));

    static List<SanityTest> tests() {
        Catalog c = new Catalog();
        info(c);
        stage(c);
        unstage(c);
        publish(c);
        unpublish(c);
        stats(c);
        expand(c);
        return c.tests();
    }

    /** The controller half of making a volume usable on this node (when advertised): its publish_context. */
    static Map<String, String> controllerPublished(TestContext ctx, Volume v) {
        if (!ctx.caps().controllerPublishes()) return Map.of();
        return PublishTests.controllerPublish(ctx, v).getPublishContextMap();
    }

    static NodeStageVolumeRequest.Builder stageRequest(TestContext ctx, Volume v, Map<String, String> publishContext, Path staging) {
        return NodeStageVolumeRequest.newBuilder()
                .setVolumeId(v.getVolumeId())
                .putAllPublishContext(publishContext)
                .setStagingTargetPath(staging.toString())
                .setVolumeCapability(ctx.capability())
                .putAllSecrets(ctx.secrets())
                .putAllVolumeContext(v.getVolumeContextMap());
    }

    static NodeUnstageVolumeRequest unstageRequest(String volumeId, Path staging) {
        return NodeUnstageVolumeRequest.newBuilder().setVolumeId(volumeId).setStagingTargetPath(staging.toString()).build();
    }

    static NodeUnpublishVolumeRequest unpublishRequest(String volumeId, Path target) {
        return NodeUnpublishVolumeRequest.newBuilder().setVolumeId(volumeId).setTargetPath(target.toString()).build();
    }

    /** Stages a volume (after controller publish) and registers the unstage. */
    static Path staged(TestContext ctx, Volume v, Map<String, String> publishContext) {
        Path staging = ctx.newStagingDir();
        ok("NodeStageVolume MUST succeed for a (controller-published) volume and an existing staging directory",
                () -> ctx.node().nodeStageVolume(stageRequest(ctx, v, publishContext, staging).build()));
        ctx.cleanup().add(Cleanup.Stage.NODE_UNSTAGE, "NodeUnstageVolume " + v.getVolumeId(),
                () -> ctx.node().nodeUnstageVolume(unstageRequest(v.getVolumeId(), staging)));
        return staging;
    }

    private static void info(Catalog c) {
        c.add("Node/NodeGetCapabilities/returns only known capabilities", Requirement.NONE, ctx -> {
            var answer = ok("NodeGetCapabilities: a Node Plugin MUST implement this RPC",
                    () -> ctx.node().nodeGetCapabilities(NodeGetCapabilitiesRequest.getDefaultInstance()));
            for (NodeServiceCapability cap : answer.getCapabilitiesList()) {
                check(cap.hasRpc() && cap.getRpc().getType() != NodeServiceCapability.RPC.Type.UNKNOWN
                                && cap.getRpc().getType() != NodeServiceCapability.RPC.Type.UNRECOGNIZED,
                        "NodeGetCapabilities reports capabilities the spec defines", () -> Verdicts.oneLine(cap));
            }
        });

        c.add("Node/NodeGetInfo/returns a node_id", Requirement.NONE, ctx -> {
            NodeGetInfoResponse info = ok("NodeGetInfo MUST succeed", () -> ctx.node().nodeGetInfo(NodeGetInfoRequest.getDefaultInstance()));
            check(!info.getNodeId().isEmpty(), "NodeGetInfoResponse.node_id is REQUIRED", () -> "an empty node_id");
            check(info.getNodeId().getBytes(StandardCharsets.UTF_8).length <= 256, "NodeGetInfoResponse.node_id SHALL NOT exceed 256 bytes",
                    () -> info.getNodeId().getBytes(StandardCharsets.UTF_8).length + " bytes");
            check(info.getMaxVolumesPerNode() >= 0, "NodeGetInfoResponse.max_volumes_per_node: the plugin MUST NOT set negative values",
                    () -> Long.toString(info.getMaxVolumesPerNode()));
            check(!info.hasAccessibleTopology() || ctx.caps().has(PluginCapability.Service.Type.VOLUME_ACCESSIBILITY_CONSTRAINTS),
                    "NodeGetInfoResponse.accessible_topology: a plugin that returns this field MUST also set the VOLUME_ACCESSIBILITY_CONSTRAINTS plugin capability",
                    () -> "accessible_topology " + Verdicts.oneLine(info.getAccessibleTopology()) + " without the capability");
            if (info.hasAccessibleTopology()) Topologies.verify(List.of(info.getAccessibleTopology()), "NodeGetInfoResponse.accessible_topology");
        });
    }

    private static void stage(Catalog c) {
        String p = "Node/NodeStageVolume";
        Requirement staging = Requirement.node(STAGE_UNSTAGE_VOLUME);

        c.add(p + "/stages a volume and repeated identical calls answer OK", STAGING, ctx -> {
            Volume v = ctx.createVolume("stage");
            Map<String, String> context = controllerPublished(ctx, v);
            Path dir = staged(ctx, v, context);
            for (int i = 1; i < ctx.repeats(); i++) {
                ok("NodeStageVolume MUST be idempotent: a volume already staged at staging_target_path with an identical capability MUST reply OK",
                        () -> ctx.node().nodeStageVolume(stageRequest(ctx, v, context, dir).build()));
            }
        });

        c.add(p + "/staging again at the same path with another volume_capability is refused", STAGING, ctx -> {
            Volume v = ctx.createVolume("stage");
            Map<String, String> context = controllerPublished(ctx, v);
            Path dir = staged(ctx, v, context);
            VolumeCapability same = ctx.capability();
            VolumeCapability.Builder other = same.toBuilder();
            if (same.hasBlock()) other.setMount(VolumeCapability.MountVolume.getDefaultInstance());
            else other.setBlock(VolumeCapability.BlockVolume.getDefaultInstance());
            Verdicts.failsWithOneOf("NodeStageVolume: a volume staged at staging_target_path but incompatible with the specified volume_capability MUST fail with ALREADY_EXISTS"
                            + " (FAILED_PRECONDITION or INVALID_ARGUMENT when the other access type is not supported at all)",
                    () -> ctx.node().nodeStageVolume(stageRequest(ctx, v, context, dir).setVolumeCapability(other).build()),
                    Status.Code.ALREADY_EXISTS, Status.Code.FAILED_PRECONDITION, Status.Code.INVALID_ARGUMENT);
        });

        c.add(p + "/a volume_capability the volume does not support fails with FAILED_PRECONDITION", STAGING, ctx -> {
            Volume v = ctx.createVolume("stage");
            VolumeCapability other = ControllerTests.unsupportedCapability(ctx, v);
            Map<String, String> context = controllerPublished(ctx, v);
            Path dir = ctx.newStagingDir();
            fails(Status.Code.FAILED_PRECONDITION, "NodeStageVolume: capabilities not supported by the volume MUST fail with FAILED_PRECONDITION (exceeds capabilities)", () -> {
                var answer = ctx.node().nodeStageVolume(stageRequest(ctx, v, context, dir).setVolumeCapability(other).build());
                ctx.cleanup().add(Cleanup.Stage.NODE_UNSTAGE, "NodeUnstageVolume " + v.getVolumeId(), () -> ctx.node().nodeUnstageVolume(unstageRequest(v.getVolumeId(), dir)));
                return answer;
            });
        });

        c.add(p + "/a volume that does not exist fails with NOT_FOUND", staging, ctx -> {
            Path dir = ctx.newStagingDir();
            String id = ctx.name("no-such-volume");
            fails(Status.Code.NOT_FOUND, "NodeStageVolume: a volume that does not exist MUST fail with NOT_FOUND", () -> {
                var answer = ctx.node().nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id)
                        .setStagingTargetPath(dir.toString()).setVolumeCapability(ctx.capability()).putAllSecrets(ctx.secrets()).build());
                ctx.cleanup().add(Cleanup.Stage.NODE_UNSTAGE, "NodeUnstageVolume " + id, () -> ctx.node().nodeUnstageVolume(unstageRequest(id, dir)));
                return answer;
            });
        });

        c.missing(p, "volume_id", staging, ctx -> {
            Path dir = ctx.newStagingDir();
            return () -> ctx.node().nodeStageVolume(NodeStageVolumeRequest.newBuilder()
                    .setStagingTargetPath(dir.toString()).setVolumeCapability(ctx.capability()).putAllSecrets(ctx.secrets()).build());
        });
        c.missing(p, "staging_target_path", STAGING, ctx -> {
            Volume v = ctx.createVolume("stage");
            Map<String, String> context = controllerPublished(ctx, v);
            return () -> ctx.node().nodeStageVolume(stageRequest(ctx, v, context, Path.of("")).clearStagingTargetPath().build());
        });
        c.missing(p, "volume_capability", STAGING, ctx -> {
            Volume v = ctx.createVolume("stage");
            Map<String, String> context = controllerPublished(ctx, v);
            Path dir = ctx.newStagingDir();
            return () -> ctx.node().nodeStageVolume(stageRequest(ctx, v, context, dir).clearVolumeCapability().build());
        });
    }

    private static void unstage(Catalog c) {
        String p = "Node/NodeUnstageVolume";
        Requirement staging = Requirement.node(STAGE_UNSTAGE_VOLUME);

        c.add(p + "/unstages a volume and repeated calls answer OK", STAGING, ctx -> {
            Volume v = ctx.createVolume("unstage");
            Map<String, String> context = controllerPublished(ctx, v);
            Path dir = ctx.newStagingDir();
            ok("NodeStageVolume MUST succeed for a (controller-published) volume and an existing staging directory",
                    () -> ctx.node().nodeStageVolume(stageRequest(ctx, v, context, dir).build()));
            Cleanup.Handle unstage = ctx.cleanup().add(Cleanup.Stage.NODE_UNSTAGE, "NodeUnstageVolume " + v.getVolumeId(),
                    () -> ctx.node().nodeUnstageVolume(unstageRequest(v.getVolumeId(), dir)));
            for (int i = 0; i < ctx.repeats(); i++) {
                int attempt = i;
                ok(attempt == 0 ? "NodeUnstageVolume MUST succeed for a staged volume"
                                : "NodeUnstageVolume MUST be idempotent: a volume not staged at staging_target_path MUST reply OK",
                        () -> ctx.node().nodeUnstageVolume(unstageRequest(v.getVolumeId(), dir)));
                unstage.done();
            }
        });

        c.add(p + "/a volume that does not exist fails with NOT_FOUND", staging, ctx -> {
            Path dir = ctx.newStagingDir();
            fails(Status.Code.NOT_FOUND, "NodeUnstageVolume: a volume that does not exist MUST fail with NOT_FOUND",
                    () -> ctx.node().nodeUnstageVolume(unstageRequest(ctx.name("no-such-volume"), dir)));
        });

        c.missing(p, "volume_id", staging, ctx -> {
            Path dir = ctx.newStagingDir();
            return () -> ctx.node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setStagingTargetPath(dir.toString()).build());
        });
        c.missing(p, "staging_target_path", STAGING, ctx -> {
            Volume v = ctx.createVolume("unstage");
            return () -> ctx.node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).build());
        });
    }

    private static void publish(Catalog c) {
        String p = "Node/NodePublishVolume";

        c.add(p + "/publishes a volume and repeated identical calls answer OK", VOLUMES, ctx -> {
            Volume v = ctx.createVolume("publish");
            Attachment a = ctx.attach(v);
            check(Files.exists(a.targetPath(), LinkOption.NOFOLLOW_LINKS),
                    "NodePublishVolume: the SP SHALL place the " + (ctx.accessType() == AccessType.BLOCK ? "block device" : "mounted directory") + " at target_path",
                    () -> a.targetPath() + " does not exist");
            NodePublishVolumeRequest again = ctx.publishRequest(v, a.publishContext(), a.stagingPath(), a.targetPath(), a.capability(), false);
            for (int i = 1; i < ctx.repeats(); i++) {
                ok("NodePublishVolume MUST be idempotent: a volume already published at target_path with compatible arguments MUST reply OK",
                        () -> ctx.node().nodePublishVolume(again));
            }
        });

        c.add(p + "/publishing again at the same target_path with a different readonly flag fails with ALREADY_EXISTS", VOLUMES, ctx -> {
            Volume v = ctx.createVolume("publish");
            Attachment a = ctx.attach(v);
            NodePublishVolumeRequest readonly = ctx.publishRequest(v, a.publishContext(), a.stagingPath(), a.targetPath(), a.capability(), true);
            fails(Status.Code.ALREADY_EXISTS,
                    "NodePublishVolume: a volume published at target_path but incompatible with the readonly flag MUST fail with ALREADY_EXISTS",
                    () -> ctx.node().nodePublishVolume(readonly));
        });

        c.add(p + "/a volume_capability the volume does not support fails with FAILED_PRECONDITION", VOLUMES, ctx -> {
            Volume v = ctx.createVolume("publish");
            VolumeCapability other = ControllerTests.unsupportedCapability(ctx, v);
            Map<String, String> context = controllerPublished(ctx, v);
            Optional<Path> staging = ctx.caps().stages() ? Optional.of(staged(ctx, v, context)) : Optional.empty();
            Path target = ctx.newTargetPath();
            NodePublishVolumeRequest request = ctx.publishRequest(v, context, staging, target, other, false);
            fails(Status.Code.FAILED_PRECONDITION, "NodePublishVolume: capabilities not supported by the volume MUST fail with FAILED_PRECONDITION (exceeds capabilities)", () -> {
                var answer = ctx.node().nodePublishVolume(request);
                ctx.cleanup().add(Cleanup.Stage.NODE_UNPUBLISH, "NodeUnpublishVolume " + v.getVolumeId(),
                        () -> ctx.node().nodeUnpublishVolume(unpublishRequest(v.getVolumeId(), target)));
                return answer;
            });
        });

        c.add(p + "/without staging_target_path on a staging plugin fails with FAILED_PRECONDITION", STAGING, ctx -> {
            Volume v = ctx.createVolume("publish");
            Map<String, String> context = controllerPublished(ctx, v);
            staged(ctx, v, context);
            Path target = ctx.newTargetPath();
            NodePublishVolumeRequest request = ctx.publishRequest(v, context, Optional.empty(), target, ctx.capability(), false);
            fails(Status.Code.FAILED_PRECONDITION,
                    "NodePublishVolume: STAGE_UNSTAGE_VOLUME is set but no staging_target_path was set: MUST fail with FAILED_PRECONDITION", () -> {
                        var answer = ctx.node().nodePublishVolume(request);
                        ctx.cleanup().add(Cleanup.Stage.NODE_UNPUBLISH, "NodeUnpublishVolume " + v.getVolumeId(),
                                () -> ctx.node().nodeUnpublishVolume(unpublishRequest(v.getVolumeId(), target)));
                        return answer;
                    });
        });

        c.add(p + "/a volume that does not exist fails with NOT_FOUND", Requirement.NONE, ctx -> {
            String id = ctx.name("no-such-volume");
            Path target = ctx.newTargetPath();
            Optional<Path> staging = ctx.caps().stages() ? Optional.of(ctx.newStagingDir()) : Optional.empty();
            NodePublishVolumeRequest request = NodePublishVolumeRequest.newBuilder().setVolumeId(id)
                    .setStagingTargetPath(staging.map(Path::toString).orElse("")).setTargetPath(target.toString())
                    .setVolumeCapability(ctx.capability()).putAllSecrets(ctx.secrets()).build();
            fails(Status.Code.NOT_FOUND, "NodePublishVolume: a volume that does not exist MUST fail with NOT_FOUND", () -> {
                var answer = ctx.node().nodePublishVolume(request);
                ctx.cleanup().add(Cleanup.Stage.NODE_UNPUBLISH, "NodeUnpublishVolume " + id, () -> ctx.node().nodeUnpublishVolume(unpublishRequest(id, target)));
                return answer;
            });
        });

        c.missing(p, "volume_id", Requirement.NONE, ctx -> {
            Path target = ctx.newTargetPath();
            return () -> ctx.node().nodePublishVolume(NodePublishVolumeRequest.newBuilder()
                    .setTargetPath(target.toString()).setVolumeCapability(ctx.capability()).putAllSecrets(ctx.secrets()).build());
        });
        c.missing(p, "target_path", VOLUMES, ctx -> {
            Volume v = ctx.createVolume("publish");
            Map<String, String> context = controllerPublished(ctx, v);
            Optional<Path> staging = ctx.caps().stages() ? Optional.of(staged(ctx, v, context)) : Optional.empty();
            return () -> ctx.node().nodePublishVolume(ctx.publishRequest(v, context, staging, Path.of(""), ctx.capability(), false)
                    .toBuilder().clearTargetPath().build());
        });
        c.missing(p, "volume_capability", VOLUMES, ctx -> {
            Volume v = ctx.createVolume("publish");
            Map<String, String> context = controllerPublished(ctx, v);
            Optional<Path> staging = ctx.caps().stages() ? Optional.of(staged(ctx, v, context)) : Optional.empty();
            Path target = ctx.newTargetPath();
            return () -> ctx.node().nodePublishVolume(ctx.publishRequest(v, context, staging, target, ctx.capability(), false)
                    .toBuilder().clearVolumeCapability().build());
        });
    }

    private static void unpublish(Catalog c) {
        String p = "Node/NodeUnpublishVolume";

        c.add(p + "/unpublishes, removes the target path, and repeated calls answer OK", VOLUMES, ctx -> {
            Volume v = ctx.createVolume("unpublish");
            Attachment a = ctx.attach(v);
            ctx.unpublish(a);
            for (int i = 1; i < ctx.repeats(); i++) {
                ok("NodeUnpublishVolume MUST be idempotent",
                        () -> ctx.node().nodeUnpublishVolume(unpublishRequest(v.getVolumeId(), a.targetPath())));
            }
            ctx.unstageAndControllerUnpublish(a);
        });

        c.add(p + "/a volume that does not exist fails with NOT_FOUND", Requirement.NONE, ctx -> {
            Path target = ctx.newTargetPath();
            fails(Status.Code.NOT_FOUND, "NodeUnpublishVolume: a volume that does not exist MUST fail with NOT_FOUND",
                    () -> ctx.node().nodeUnpublishVolume(unpublishRequest(ctx.name("no-such-volume"), target)));
        });

        c.missing(p, "volume_id", Requirement.NONE, ctx -> {
            Path target = ctx.newTargetPath();
            return () -> ctx.node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setTargetPath(target.toString()).build());
        });
        c.missing(p, "target_path", VOLUMES, ctx -> {
            Volume v = ctx.createVolume("unpublish");
            return () -> ctx.node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).build());
        });
    }

    static NodeGetVolumeStatsRequest statsRequest(String volumeId, Path volumePath, String stagingPath) {
        return NodeGetVolumeStatsRequest.newBuilder().setVolumeId(volumeId).setVolumePath(volumePath.toString()).setStagingTargetPath(stagingPath).build();
    }

    /** Checks the usage entries the spec constrains and returns the BYTES entry, if any. */
    static Optional<VolumeUsage> checkUsage(NodeGetVolumeStatsResponse stats) {
        for (VolumeUsage u : stats.getUsageList()) {
            check(u.getUnit() == VolumeUsage.Unit.BYTES || u.getUnit() == VolumeUsage.Unit.INODES,
                    "VolumeUsage.unit (REQUIRED) is BYTES or INODES", () -> Verdicts.oneLine(u));
            check(u.getTotal() >= 0 && u.getAvailable() >= 0 && u.getUsed() >= 0,
                    "VolumeUsage: total, available and used MUST NOT be negative", () -> Verdicts.oneLine(u));
        }
        return stats.getUsageList().stream().filter(u -> u.getUnit() == VolumeUsage.Unit.BYTES).findFirst();
    }

    private static void stats(Catalog c) {
        String p = "Node/NodeGetVolumeStats";
        Requirement stats = Requirement.node(GET_VOLUME_STATS);

        c.add(p + "/reports the usage of a published volume", VOLUMES.and(stats), ctx -> {
            Volume v = ctx.createVolume("stats");
            Attachment a = ctx.attach(v);
            NodeGetVolumeStatsResponse answer = ok("NodeGetVolumeStats MUST succeed for a published volume (GET_VOLUME_STATS)",
                    () -> ctx.node().nodeGetVolumeStats(statsRequest(v.getVolumeId(), a.targetPath(), a.stagingPathText())));
            Optional<VolumeUsage> bytes = checkUsage(answer);
            if (ctx.accessType() == AccessType.MOUNT) {
                check(bytes.isPresent() && bytes.get().getTotal() > 0, "NodeGetVolumeStats returns the volume capacity statistics of a mounted volume",
                        () -> "no BYTES usage with a total: " + answer.getUsageList().stream().map(Verdicts::oneLine).toList());
            }
            if (ctx.caps().has(VOLUME_CONDITION)) {
                check(answer.hasVolumeCondition(), "NodeGetVolumeStatsResponse.volume_condition MUST be specified with the VOLUME_CONDITION node capability",
                        () -> "no volume_condition");
                check(!answer.getVolumeCondition().getMessage().isEmpty(), "VolumeCondition.message is REQUIRED", () -> "an empty message");
            }
        });

        c.add(p + "/a volume that does not exist fails with NOT_FOUND", stats, ctx -> {
            Path dir = ctx.newStagingDir();
            fails(Status.Code.NOT_FOUND, "NodeGetVolumeStats: a volume that does not exist MUST fail with NOT_FOUND",
                    () -> ctx.node().nodeGetVolumeStats(statsRequest(ctx.name("no-such-volume"), dir, "")));
        });

        c.add(p + "/a path the volume is not published at fails with NOT_FOUND", VOLUMES.and(stats), ctx -> {
            Volume v = ctx.createVolume("stats");
            ctx.attach(v);
            Path elsewhere = ctx.newStagingDir();
            fails(Status.Code.NOT_FOUND, "NodeGetVolumeStats: a volume that does not exist on the specified volume_path MUST fail with NOT_FOUND",
                    () -> ctx.node().nodeGetVolumeStats(statsRequest(v.getVolumeId(), elsewhere, "")));
        });

        c.add(p + "/a relative volume_path fails with NOT_FOUND", VOLUMES.and(stats), ctx -> {
            Volume v = ctx.createVolume("stats");
            ctx.attach(v);
            fails(Status.Code.NOT_FOUND, "NodeGetVolumeStats: a volume that does not exist on the specified volume_path MUST fail with NOT_FOUND"
                            + " (a relative path names no place a volume was published at)",
                    () -> ctx.node().nodeGetVolumeStats(statsRequest(v.getVolumeId(), Path.of("some/path"), "")));
        });

        c.missing(p, "volume_id", stats, ctx -> {
            Path dir = ctx.newStagingDir();
            return () -> ctx.node().nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumePath(dir.toString()).build());
        });
        c.missing(p, "volume_path", VOLUMES.and(stats), ctx -> {
            Volume v = ctx.createVolume("stats");
            return () -> ctx.node().nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(v.getVolumeId()).build());
        });
    }

    static NodeExpandVolumeRequest.Builder expandRequest(TestContext ctx, String volumeId, Path volumePath, String staging, long bytes) {
        return NodeExpandVolumeRequest.newBuilder()
                .setVolumeId(volumeId)
                .setVolumePath(volumePath.toString())
                .setStagingTargetPath(staging)
                .setCapacityRange(TestContext.required(bytes))
                .setVolumeCapability(ctx.capability())
                .putAllSecrets(ctx.secrets());
    }

    private static void expand(Catalog c) {
        String p = "Node/NodeExpandVolume";
        Requirement expand = Requirement.node(EXPAND_VOLUME);

        c.add(p + "/a volume_capability the volume does not support fails with INVALID_ARGUMENT", VOLUMES.and(expand), ctx -> {
            Volume v = ctx.createVolume("nexpand");
            VolumeCapability other = ControllerTests.unsupportedCapability(ctx, v);
            Attachment a = ctx.attach(v);
            long size = v.getCapacityBytes() > 0 ? v.getCapacityBytes() : ctx.volumeSize();
            fails(Status.Code.INVALID_ARGUMENT, "NodeExpandVolume: capabilities not supported by the volume MUST fail with INVALID_ARGUMENT (exceeds capabilities)",
                    () -> ctx.node().nodeExpandVolume(expandRequest(ctx, v.getVolumeId(), a.targetPath(), a.stagingPathText(), size)
                            .setVolumeCapability(other).build()));
        });

        c.add(p + "/limit_bytes below the volume's size fails with OUT_OF_RANGE", VOLUMES.and(expand), ctx -> {
            Volume v = ctx.createVolume("nexpand");
            Attachment a = ctx.attach(v);
            long below = (v.getCapacityBytes() > 0 ? v.getCapacityBytes() : ctx.volumeSize()) / 2;
            fails(Status.Code.OUT_OF_RANGE, "NodeExpandVolume: a capacity_range the plugin does not allow (limit_bytes below the volume's size) MUST fail with OUT_OF_RANGE",
                    () -> ctx.node().nodeExpandVolume(expandRequest(ctx, v.getVolumeId(), a.targetPath(), a.stagingPathText(), below)
                            .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(below).setLimitBytes(below)).build()));
        });

        c.add(p + "/a volume that does not exist fails with NOT_FOUND", expand, ctx -> {
            Path dir = ctx.newStagingDir();
            fails(Status.Code.NOT_FOUND, "NodeExpandVolume: a volume that does not exist MUST fail with NOT_FOUND",
                    () -> ctx.node().nodeExpandVolume(expandRequest(ctx, ctx.name("no-such-volume"), dir, "", 2 * ctx.volumeSize()).build()));
        });

        c.missing(p, "volume_id", expand, ctx -> {
            Path dir = ctx.newStagingDir();
            return () -> ctx.node().nodeExpandVolume(expandRequest(ctx, "", dir, "", 2 * ctx.volumeSize()).build());
        });
        c.missing(p, "volume_path", VOLUMES.and(expand), ctx -> {
            Volume v = ctx.createVolume("nexpand");
            return () -> ctx.node().nodeExpandVolume(expandRequest(ctx, v.getVolumeId(), Path.of(""), "", 2 * ctx.volumeSize()).clearVolumePath().build());
        });
    }
}
