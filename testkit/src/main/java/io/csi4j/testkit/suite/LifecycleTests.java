package io.csi4j.testkit.suite;

import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.CLONE_VOLUME;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.CREATE_DELETE_SNAPSHOT;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.PUBLISH_READONLY;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.PUBLISH_UNPUBLISH_VOLUME;
import static io.csi4j.proto.csi.NodeServiceCapability.RPC.Type.GET_VOLUME_STATS;
import static io.csi4j.testkit.suite.Verdicts.check;
import static io.csi4j.testkit.suite.Verdicts.ok;

import io.csi4j.proto.csi.ControllerExpandVolumeResponse;
import io.csi4j.proto.csi.ControllerServiceCapability;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.NodeExpandVolumeResponse;
import io.csi4j.proto.csi.NodeServiceCapability;
import io.csi4j.proto.csi.PluginCapability;
import io.csi4j.proto.csi.Snapshot;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeContentSource;
import io.csi4j.proto.csi.VolumeUsage;
import io.csi4j.testkit.AccessType;
import io.grpc.Status;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Whole volume lifecycles the way a CO drives them, with real data: the suite runs on the plugin's
 * node and writes into target_path (a file in the mounted directory, or the block device itself).
 */
final class LifecycleTests {
    private LifecycleTests() {}

    static final Requirement VOLUMES = Requirement.controller(CREATE_DELETE_VOLUME);

    static List<SanityTest> tests() {
        Catalog c = new Catalog();

        c.add("Lifecycle/volume/data written to a published volume is there after unpublish and publish", VOLUMES, ctx -> {
            Volume v = ctx.createVolume("life");
            Attachment a = ctx.attach(v);
            byte[] data = VolumeData.pattern(seed());
            write(ctx, a, data);
            expectData(ctx, a, data, "NodePublishVolume: the SP MUST ensure the CO can use the published volume as described: it reads back what was written");
            ctx.detach(a);
            Attachment again = ctx.attach(v);
            expectData(ctx, again, data, "a volume keeps its data from one publication to the next (NodeUnpublishVolume undoes the publication, not the data)");
            ctx.detach(again);
            ctx.deleteVolume(v.getVolumeId());
        });

        c.add("Lifecycle/snapshot/a volume restored from a snapshot holds the data of the moment the snapshot was cut",
                Requirement.controller(CREATE_DELETE_VOLUME, CREATE_DELETE_SNAPSHOT), ctx -> {
                    Volume v = ctx.createVolume("life-source");
                    Attachment a = ctx.attach(v);
                    byte[] before = VolumeData.pattern(seed());
                    write(ctx, a, before);
                    Snapshot s = SnapshotTests.readySnapshot(ctx, v.getVolumeId(), "life-snapshot");
                    write(ctx, a, VolumeData.pattern(seed()));
                    ctx.detach(a);
                    Volume restored = ctx.createVolumeFromSnapshot("life-restored", s.getSnapshotId(), ctx.volumeSize());
                    Attachment r = ctx.attach(restored);
                    expectData(ctx, r, before, "CreateVolume from a snapshot: the new volume is pre-populated with the snapshot's data (as of when it was cut)");
                    ctx.detach(r);
                    ctx.deleteVolume(restored.getVolumeId());
                    ctx.deleteSnapshot(s.getSnapshotId());
                    ctx.deleteVolume(v.getVolumeId());
                });

        c.add("Lifecycle/snapshot/a restore larger than the snapshot has the requested size and the data, or fails with OUT_OF_RANGE",
                Requirement.controller(CREATE_DELETE_VOLUME, CREATE_DELETE_SNAPSHOT), ctx -> {
                    Volume v = ctx.createVolume("life-source");
                    Attachment a = ctx.attach(v);
                    byte[] data = VolumeData.pattern(seed());
                    write(ctx, a, data);
                    Snapshot s = SnapshotTests.readySnapshot(ctx, v.getVolumeId(), "life-snapshot");
                    ctx.detach(a);
                    long bigger = 2 * ctx.volumeSize();
                    CreateVolumeRequest request = ctx.volumeRequest(ctx.name("life-bigger"))
                            .setCapacityRange(TestContext.required(bigger))
                            .setVolumeContentSource(VolumeContentSource.newBuilder()
                                    .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(s.getSnapshotId())))
                            .build();
                    String rule = "CreateVolume from a snapshot with a larger size: refuse with OUT_OF_RANGE or provide a volume that has both the requested size and the snapshot's data";
                    var answer = new AtomicReference<Volume>();
                    Status.Code got = Verdicts.okOr(rule, () -> answer.getAndSet(ControllerTests.tryCreate(ctx, request).getVolume()), Status.Code.OUT_OF_RANGE);
                    if (got == Status.Code.OUT_OF_RANGE) return;
                    Volume restored = answer.get();
                    check(restored.getCapacityBytes() == 0 || restored.getCapacityBytes() >= bigger, rule,
                            () -> "capacity_bytes " + restored.getCapacityBytes() + " < " + bigger);
                    Attachment r = ctx.attach(restored);
                    expectData(ctx, r, data, rule);
                    expectTotalAbove(ctx, r, ctx.volumeSize(), bigger, rule);
                });

        c.add("Lifecycle/clone/a clone holds the data of its source volume", Requirement.controller(CREATE_DELETE_VOLUME, CLONE_VOLUME), ctx -> {
            Volume v = ctx.createVolume("life-source");
            Attachment a = ctx.attach(v);
            byte[] data = VolumeData.pattern(seed());
            write(ctx, a, data);
            ctx.detach(a);
            Volume clone = ctx.cloneVolume("life-clone", v.getVolumeId(), ctx.volumeSize());
            Attachment r = ctx.attach(clone);
            expectData(ctx, r, data, "CreateVolume from a volume (CLONE_VOLUME): the new volume is pre-populated with the source volume's data");
            ctx.detach(r);
            ctx.deleteVolume(clone.getVolumeId());
            ctx.deleteVolume(v.getVolumeId());
        });

        c.add("Lifecycle/clone/a clone larger than its source has the requested size and the data, or fails with OUT_OF_RANGE",
                Requirement.controller(CREATE_DELETE_VOLUME, CLONE_VOLUME), ctx -> {
                    Volume v = ctx.createVolume("life-source");
                    Attachment a = ctx.attach(v);
                    byte[] data = VolumeData.pattern(seed());
                    write(ctx, a, data);
                    ctx.detach(a);
                    long bigger = 2 * ctx.volumeSize();
                    CreateVolumeRequest request = ctx.volumeRequest(ctx.name("life-bigger-clone"))
                            .setCapacityRange(TestContext.required(bigger))
                            .setVolumeContentSource(VolumeContentSource.newBuilder()
                                    .setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(v.getVolumeId())))
                            .build();
                    String rule = "CreateVolume from a volume with a larger size: refuse with OUT_OF_RANGE or provide a volume that has both the requested size and the source's data";
                    var answer = new AtomicReference<Volume>();
                    Status.Code got = Verdicts.okOr(rule, () -> answer.getAndSet(ControllerTests.tryCreate(ctx, request).getVolume()), Status.Code.OUT_OF_RANGE);
                    if (got == Status.Code.OUT_OF_RANGE) return;
                    Volume clone = answer.get();
                    check(clone.getCapacityBytes() == 0 || clone.getCapacityBytes() >= bigger, rule,
                            () -> "capacity_bytes " + clone.getCapacityBytes() + " < " + bigger);
                    Attachment r = ctx.attach(clone);
                    expectData(ctx, r, data, rule);
                    expectTotalAbove(ctx, r, ctx.volumeSize(), bigger, rule);
                });

        c.add("Lifecycle/expansion/an expanded volume reports the new size and keeps its data",
                VOLUMES.and(Requirement.custom("controller or node capability EXPAND_VOLUME",
                        (caps, k) -> caps.has(ControllerServiceCapability.RPC.Type.EXPAND_VOLUME) || caps.has(NodeServiceCapability.RPC.Type.EXPAND_VOLUME))),
                LifecycleTests::expansion);

        c.add("Lifecycle/readonly/a volume published readonly can be read but not written", VOLUMES, ctx -> {
            Volume v = ctx.createVolume("life-ro");
            Attachment a = ctx.attach(v);
            byte[] data = VolumeData.pattern(seed());
            write(ctx, a, data);
            ctx.detach(a);
            Attachment ro = ctx.attach(v, ctx.capability(), true);
            expectData(ctx, ro, data, "NodePublishVolume with readonly: the volume's data is readable");
            expectReadOnly(ctx, ro, "NodePublishVolume: readonly=true means the SP MUST publish the volume in readonly mode");
            ctx.detach(ro);
        });

        c.add("Lifecycle/readonly/a volume controller-published readonly cannot be written on the node",
                VOLUMES.and(Requirement.controller(PUBLISH_UNPUBLISH_VOLUME, PUBLISH_READONLY)), LifecycleTests::controllerReadOnly);

        c.add("Lifecycle/long paths/staging and target paths longer than 128 bytes work at every node RPC", VOLUMES, ctx -> {
            Volume v = ctx.createVolume("life-long");
            String rule = "node RPC paths override the 128-byte limit: the SP MUST accept a path of at least 128 bytes";
            Attachment a;
            try {
                a = ctx.attach(v, ctx.capability(), false, ctx::newLongStagingDir, ctx::newLongTargetPath);
            } catch (SpecViolation e) {
                throw new SpecViolation(rule + " (NodeStageVolume, NodePublishVolume)", e.getMessage());
            }
            check(a.targetPath().toString().length() > 128 && (a.stagingPath().isEmpty() || a.stagingPathText().length() > 128),
                    "the suite's own long paths are longer than 128 bytes", () -> a.targetPath() + " " + a.stagingPathText());
            byte[] data = VolumeData.pattern(seed());
            write(ctx, a, data);
            expectData(ctx, a, data, rule + " (NodeStageVolume, NodePublishVolume)");
            if (ctx.caps().has(GET_VOLUME_STATS)) {
                ok(rule + " (NodeGetVolumeStats.volume_path and staging_target_path)",
                        () -> ctx.node().nodeGetVolumeStats(NodeTests.statsRequest(a.volumeId(), a.targetPath(), a.stagingPathText())));
            }
            if (ctx.caps().has(NodeServiceCapability.RPC.Type.EXPAND_VOLUME)) {
                long size = v.getCapacityBytes() > 0 ? v.getCapacityBytes() : ctx.volumeSize();
                ok(rule + " (NodeExpandVolume.volume_path and staging_target_path, at the current size)",
                        () -> ctx.node().nodeExpandVolume(NodeTests.expandRequest(ctx, a.volumeId(), a.targetPath(), a.stagingPathText(), size).build()));
            }
            ctx.detach(a);
        });

        return c.tests();
    }

    /**
     * ControllerPublishVolume with readonly (PUBLISH_READONLY): whatever the node side is asked, the
     * volume must not be writable there. A plugin may also refuse the writable node publication.
     */
    private static void controllerReadOnly(TestContext ctx) throws Exception {
        Volume v = ctx.createVolume("life-cro");
        Attachment a = ctx.attach(v);
        byte[] data = VolumeData.pattern(seed());
        write(ctx, a, data);
        ctx.detach(a);
        String rule = "ControllerPublishVolume: readonly=true means the SP MUST publish the volume in readonly mode";
        ok("ControllerPublishVolume MUST succeed with readonly=true (PUBLISH_READONLY)",
                () -> ctx.controller().controllerPublishVolume(PublishTests.publishRequest(ctx, v).setReadonly(true).build()));
        ctx.cleanup().add(Cleanup.Stage.CONTROLLER_UNPUBLISH, "ControllerUnpublishVolume " + v.getVolumeId(),
                () -> ctx.controller().controllerUnpublishVolume(PublishTests.unpublishRequest(ctx, v.getVolumeId())));
        Optional<Path> staging = Optional.empty();
        if (ctx.caps().stages()) {
            Path dir = ctx.newStagingDir();
            Status.Code got = Verdicts.okOr(rule + " (NodeStageVolume may refuse a writable use of it)", () -> {
                var answer = ctx.node().nodeStageVolume(NodeTests.stageRequest(ctx, v, Map.of(), dir).build());
                ctx.cleanup().add(Cleanup.Stage.NODE_UNSTAGE, "NodeUnstageVolume " + v.getVolumeId(),
                        () -> ctx.node().nodeUnstageVolume(NodeTests.unstageRequest(v.getVolumeId(), dir)));
                return answer;
            }, Status.Code.FAILED_PRECONDITION, Status.Code.INVALID_ARGUMENT);
            if (got != Status.Code.OK) return;
            staging = Optional.of(dir);
        }
        Path target = ctx.newTargetPath();
        var publish = ctx.publishRequest(v, Map.of(), staging, target, ctx.capability(), false);
        Status.Code got = Verdicts.okOr(rule + " (NodePublishVolume may refuse a writable publication of it)", () -> {
            var answer = ctx.node().nodePublishVolume(publish);
            ctx.cleanup().add(Cleanup.Stage.NODE_UNPUBLISH, "NodeUnpublishVolume " + v.getVolumeId(),
                    () -> ctx.node().nodeUnpublishVolume(NodeTests.unpublishRequest(v.getVolumeId(), target)));
            return answer;
        }, Status.Code.FAILED_PRECONDITION, Status.Code.INVALID_ARGUMENT);
        if (got != Status.Code.OK) return;
        String difference = VolumeData.difference(target, ctx.accessType(), data);
        check(difference == null, "a volume keeps its data from one publication to the next", () -> difference);
        boolean written;
        try {
            VolumeData.write(target, ctx.accessType(), VolumeData.pattern(seed()));
            written = true;
        } catch (IOException expected) {
            written = false;
        }
        check(!written, rule, () -> "the node published it writable: writing " + target + " succeeded");
    }

    /** Writing must fail: a file in a mounted volume, the device itself for a block volume. */
    static void expectReadOnly(TestContext ctx, Attachment a, String rule) {
        boolean written;
        Path probe = ctx.accessType() == AccessType.MOUNT ? a.targetPath().resolve("csi4j-sanity-readonly-probe") : a.targetPath();
        try {
            if (ctx.accessType() == AccessType.MOUNT) Files.write(probe, new byte[] {1});
            else VolumeData.write(probe, AccessType.BLOCK, VolumeData.pattern(seed()));
            written = true;
        } catch (IOException expected) {
            written = false;
        }
        check(!written, rule, () -> "writing " + probe + " succeeded");
    }

    private static void expansion(TestContext ctx) throws Exception {
        long size = ctx.volumeSize();
        long bigger = 2 * size;
        Capabilities caps = ctx.caps();
        boolean controllerExpands = caps.has(ControllerServiceCapability.RPC.Type.EXPAND_VOLUME);
        boolean nodeExpands = caps.has(NodeServiceCapability.RPC.Type.EXPAND_VOLUME);
        boolean online = caps.has(PluginCapability.VolumeExpansion.Type.ONLINE);

        Volume v = ctx.createVolume("life-expand");
        Attachment a = ctx.attach(v);
        byte[] data = VolumeData.pattern(seed());
        write(ctx, a, data);

        boolean nodeExpansionRequired = nodeExpands;
        if (controllerExpands) {
            if (!online) ctx.detach(a); // OFFLINE: ControllerExpandVolume only once the volume is unpublished
            ControllerExpandVolumeResponse answer = ok("ControllerExpandVolume MUST succeed for an existing volume (EXPAND_VOLUME"
                            + (online ? ", ONLINE: also while published)" : ")"),
                    () -> ctx.controller().controllerExpandVolume(ControllerTests.expandRequest(ctx, v.getVolumeId(), bigger).build()));
            check(answer.getCapacityBytes() >= bigger, "ControllerExpandVolumeResponse.capacity_bytes (REQUIRED) is the capacity after expansion",
                    () -> answer.getCapacityBytes() + " < requested " + bigger);
            nodeExpansionRequired = answer.getNodeExpansionRequired();
            check(!nodeExpansionRequired || nodeExpands, "ControllerExpandVolumeResponse.node_expansion_required asks for NodeExpandVolume, which needs the node EXPAND_VOLUME capability",
                    () -> "node_expansion_required=true without the node capability");
            if (!online) a = ctx.attach(v);
        }
        if (nodeExpansionRequired) {
            Attachment current = a;
            for (int i = 0; i < ctx.repeats(); i++) {
                NodeExpandVolumeResponse answer = ok("NodeExpandVolume MUST succeed (and be idempotent) for a published volume after ControllerExpandVolume",
                        () -> ctx.node().nodeExpandVolume(NodeTests.expandRequest(ctx, v.getVolumeId(), current.targetPath(), current.stagingPathText(), bigger).build()));
                check(answer.getCapacityBytes() == 0 || answer.getCapacityBytes() >= bigger,
                        "NodeExpandVolumeResponse.capacity_bytes is the capacity of the volume after expansion",
                        () -> answer.getCapacityBytes() + " < requested " + bigger);
            }
        }
        expectTotalAbove(ctx, a, size, bigger, "NodeGetVolumeStats after expansion reports the expanded capacity");
        expectData(ctx, a, data, "expansion keeps a volume's data");
        ctx.detach(a);
    }

    /**
     * With GET_VOLUME_STATS, the usage total must show growth: a filesystem's total beyond the old
     * capacity (its overhead stays below half), a block device's total at least the new size.
     */
    private static void expectTotalAbove(TestContext ctx, Attachment a, long oldSize, long newSize, String rule) {
        if (!ctx.caps().has(GET_VOLUME_STATS)) return;
        var stats = ok("NodeGetVolumeStats MUST succeed for a published volume (GET_VOLUME_STATS)",
                () -> ctx.node().nodeGetVolumeStats(NodeTests.statsRequest(a.volumeId(), a.targetPath(), a.stagingPathText())));
        Optional<VolumeUsage> bytes = NodeTests.checkUsage(stats);
        if (bytes.isEmpty()) {
            check(ctx.accessType() == AccessType.BLOCK, rule, () -> "no BYTES usage for a mounted volume");
            return;
        }
        long total = bytes.get().getTotal();
        if (ctx.accessType() == AccessType.MOUNT) {
            check(total > oldSize, rule, () -> "total " + total + " bytes, not above the old capacity " + oldSize);
        } else {
            check(total >= newSize, rule, () -> "total " + total + " bytes, below the new size " + newSize);
        }
    }

    static long seed() {
        return ThreadLocalRandom.current().nextLong();
    }

    static void write(TestContext ctx, Attachment a, byte[] data) {
        try {
            VolumeData.write(a.targetPath(), ctx.accessType(), data);
        } catch (IOException e) {
            throw new SpecViolation("NodePublishVolume: the SP MUST ensure the CO can use the published volume as described (writable at target_path)",
                    "writing failed: " + e);
        }
    }

    static void expectData(TestContext ctx, Attachment a, byte[] data, String rule) {
        String difference = VolumeData.difference(a.targetPath(), ctx.accessType(), data);
        check(difference == null, rule, () -> difference);
    }
}
