package io.csi4j.driver.csi;

import static io.csi4j.driver.csi.Wire.MIB;
import static io.csi4j.driver.csi.Wire.block;
import static io.csi4j.driver.csi.Wire.create;
import static io.csi4j.driver.csi.Wire.fails;
import static io.csi4j.driver.csi.Wire.mount;
import static io.csi4j.driver.csi.Wire.publish;
import static io.csi4j.driver.csi.Wire.range;
import static io.csi4j.driver.csi.Wire.stage;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.os.BlockDevice;
import io.csi4j.driver.os.FileStat;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.testing.ContentPattern;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import io.csi4j.proto.csi.*;
import io.csi4j.proto.csi.VolumeCapability.AccessMode.Mode;
import io.grpc.Status;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The node service over a real socket, image engine on its own XFS pool: the stage/publish life
 * cycle of filesystem and block volumes, access modes, mount groups, ephemeral inline volumes,
 * stats and conditions, online expansion, and a plugin restart between stage and publish. Every
 * effect is checked in the kernel's mount table and loop devices.
 */
@ExtendWith(LeakCheck.class)
class NodeSocketTest {
    @RegisterExtension
    static final ServedImagePool POOL = ServedImagePool.ofBytes(4L << 30);

    private static ServedDriver served() { return POOL.served(); }

    private static Path nodeDir() { return POOL.nodeDir(); }

    // ---- life cycle ----

    @ParameterizedTest
    @ValueSource(strings = {"ext4", "xfs"})
    void filesystemLifeCycleIsIdempotentAtEveryStep(String fsType) throws Exception {
        long size = fsType.equals("xfs") ? 300 * MIB : 32 * MIB;
        VolumeCapability cap = mount(fsType);
        String id = newVolume("fs-" + fsType, size, cap);
        Path staging = staging(id);
        Path target = target(id, "a");

        served().node.nodeStageVolume(stage(id, staging, cap));
        MountInfo staged = MountTable.read().at(staging).orElseThrow();
        served().node.nodeStageVolume(stage(id, staging, cap));                     // again: same mount, no second
        assertEquals(List.of(staged.id()), MountTable.read().mounts().stream().filter(m -> m.mountPoint().equals(staging))
                .map(MountInfo::id).toList());
        assertEquals(fsType, staged.fsType());
        assertEquals(1, loops(id).size());

        served().node.nodePublishVolume(publish(id, staging, target, cap));
        served().node.nodePublishVolume(publish(id, staging, target, cap));          // again: OK
        Files.writeString(target.resolve("hello.txt"), "through the target");
        assertEquals("through the target", Files.readString(staging.resolve("hello.txt")), "the target shows the staged filesystem");
        // same target, other arguments: ALREADY_EXISTS
        fails(Status.Code.ALREADY_EXISTS, () -> served().node.nodePublishVolume(publish(id, staging, target, cap).toBuilder()
                .setReadonly(true).build()));
        Status busy = fails(Status.Code.FAILED_PRECONDITION, () -> served().node.nodeUnstageVolume(unstage(id, staging)));
        assertTrue(busy.getDescription().contains(target.toString()), busy.getDescription());

        // a read-only second publication is read-only
        Path readOnly = target(id, "ro");
        VolumeCapability multi = mount(fsType, Mode.SINGLE_NODE_MULTI_WRITER);
        served().node.nodePublishVolume(publish(id, staging, readOnly, multi).toBuilder().setReadonly(true).build());
        assertTrue(MountTable.read().at(readOnly).orElseThrow().readOnly());
        assertEquals("through the target", Files.readString(readOnly.resolve("hello.txt")));
        unpublish(id, readOnly);

        unpublish(id, target);
        unpublish(id, target);                                                     // again: OK
        assertFalse(Files.exists(target), "the target directory the plugin made is gone");
        served().node.nodeUnstageVolume(unstage(id, staging));
        served().node.nodeUnstageVolume(unstage(id, staging));                       // again: OK
        assertFalse(MountTable.read().isMountPoint(staging));
        assertEquals(List.of(), loops(id));

        // the data stays: stage again and it is there
        served().node.nodeStageVolume(stage(id, staging, cap));
        assertEquals("through the target", Files.readString(staging.resolve("hello.txt")));
        served().node.nodeUnstageVolume(unstage(id, staging));
    }

    @Test
    void blockLifeCycle() throws Exception {
        String id = newVolume("dev", 24 * MIB, block());
        Path staging = staging(id);
        Path target = nodeDir().resolve("pods").resolve("dev").resolve("device");
        served().node.nodeStageVolume(stage(id, staging, block()));
        served().node.nodeStageVolume(stage(id, staging, block()));
        assertEquals(1, loops(id).size());
        served().node.nodePublishVolume(publish(id, staging, target, block()));
        served().node.nodePublishVolume(publish(id, staging, target, block()));
        assertTrue(FileStat.of(target).isBlockDevice());
        assertEquals(24 * MIB, BlockDevice.size(target));
        ContentPattern.write(target, 7);
        assertEquals(Optional.empty(), ContentPattern.mismatch(served().image(id), 7), "written through the device, in the image");
        fails(Status.Code.FAILED_PRECONDITION, () -> served().node.nodeUnstageVolume(unstage(id, staging)));
        fails(Status.Code.FAILED_PRECONDITION, () -> served().node.nodeStageVolume(stage(id, nodeDir().resolve("other"), mount("ext4"))));

        unpublish(id, target);
        unpublish(id, target);
        assertFalse(Files.exists(target));
        served().node.nodeUnstageVolume(unstage(id, staging));
        served().node.nodeUnstageVolume(unstage(id, staging));
        assertEquals(List.of(), loops(id));
    }

    @Test
    void publishNeedsAStagedVolume() {
        String id = newVolume("unstaged", 32 * MIB, mount("ext4"));
        Status status = fails(Status.Code.FAILED_PRECONDITION, () -> served().node.nodePublishVolume(
                publish(id, staging(id), target(id, "a"), mount("ext4"))));
        assertTrue(status.getDescription().contains("not staged"), status.getDescription());
        fails(Status.Code.FAILED_PRECONDITION, () -> served().node.nodePublishVolume(NodePublishVolumeRequest.newBuilder()
                .setVolumeId(id).setTargetPath(target(id, "a").toString()).setVolumeCapability(mount("ext4")).build()));
        fails(Status.Code.NOT_FOUND, () -> served().node.nodeStageVolume(stage("vol-aaaaaaaaaaaaaaaa-node-a", staging(id), mount("ext4"))));
        fails(Status.Code.INVALID_ARGUMENT, () -> served().node.nodeStageVolume(stage(id, Path.of("relative/staging"), mount("ext4"))));
        fails(Status.Code.INVALID_ARGUMENT, () -> served().node.nodePublishVolume(publish(id, staging(id), Path.of("relative/target"), mount("ext4"))));
        assertEquals(List.of(), loops(id));
    }

    // ---- access modes ----

    @Test
    void singleNodeSingleWriterAllowsOneTargetOnly() throws Exception {
        VolumeCapability single = mount("ext4", Mode.SINGLE_NODE_SINGLE_WRITER);
        String id = newVolume("rwop", 32 * MIB, single);
        Path staging = staging(id);
        Path first = target(id, "first");
        Path second = target(id, "second");
        served().node.nodeStageVolume(stage(id, staging, single));
        served().node.nodePublishVolume(publish(id, staging, first, single));
        served().node.nodePublishVolume(publish(id, staging, first, single));          // the same target again: OK
        Status refused = fails(Status.Code.FAILED_PRECONDITION, () -> served().node.nodePublishVolume(publish(id, staging, second, single)));
        assertTrue(refused.getDescription().contains(first.toString()), refused.getDescription());
        assertFalse(MountTable.read().isMountPoint(second));
        unpublish(id, first);

        // a staging path the volume is not staged at: the answer says it is staged elsewhere, not published
        Path elsewhere = nodeDir().resolve("other-staging");
        Status wrongStage = fails(Status.Code.FAILED_PRECONDITION, () -> served().node.nodePublishVolume(publish(id, elsewhere, second, single)));
        assertEquals("volume " + id + " is staged at " + staging + ", not at " + elsewhere
                + ": nothing was published; give NodePublishVolume the staging_target_path NodeStageVolume was given",
                wrongStage.getDescription());
        assertFalse(MountTable.read().isMountPoint(second));

        served().node.nodePublishVolume(publish(id, staging, second, single));         // once the first is gone: OK
        unpublish(id, second);

        // SINGLE_NODE_MULTI_WRITER: two targets at once
        VolumeCapability multi = mount("ext4", Mode.SINGLE_NODE_MULTI_WRITER);
        served().node.nodePublishVolume(publish(id, staging, first, multi));
        served().node.nodePublishVolume(publish(id, staging, second, multi));
        Files.writeString(first.resolve("shared"), "one filesystem");
        assertEquals("one filesystem", Files.readString(second.resolve("shared")));
        unpublish(id, first);
        unpublish(id, second);
        served().node.nodeUnstageVolume(unstage(id, staging));
    }

    @Test
    void volumeMountGroupLetsTheGroupWrite() throws Exception {
        int gid = 4321;
        VolumeCapability plain = mount("ext4");
        VolumeCapability grouped = Wire.withMountGroup(plain, Integer.toString(gid));
        String id = newVolume("fsgroup", 32 * MIB, grouped);
        Path staging = staging(id);
        Path target = target(id, "a");
        served().node.nodeStageVolume(stage(id, staging, grouped));

        // without the mount group, user 1000 in group 4321 cannot write the root-owned filesystem
        served().node.nodePublishVolume(publish(id, staging, target, plain));
        assertNotEquals(0, asUser(1000, gid, "touch", target.resolve("denied").toString()));
        unpublish(id, target);

        served().node.nodePublishVolume(publish(id, staging, target, grouped));
        assertEquals(0, asUser(1000, gid, "touch", target.resolve("allowed").toString()));
        assertEquals(1000, Files.getAttribute(target.resolve("allowed"), "unix:uid"));
        assertEquals(gid, Files.getAttribute(target.resolve("allowed"), "unix:gid"), "setgid directory: new files belong to the mount group");
        assertEquals(gid, Files.getAttribute(target, "unix:gid"));
        int mode = FileStat.of(target).permissions();
        assertEquals(02000, mode & 02000, "setgid");
        assertEquals(0070, mode & 0070, "group rwx");
        assertNotEquals(0, asUser(1000, 5555, "touch", target.resolve("other-group").toString()), "another group still cannot");

        fails(Status.Code.INVALID_ARGUMENT, () -> served().node.nodePublishVolume(publish(id, staging, target(id, "b"),
                Wire.withMountGroup(mount("ext4", Mode.SINGLE_NODE_MULTI_WRITER), "wheel"))));
        unpublish(id, target);
        served().node.nodeUnstageVolume(unstage(id, staging));
    }

    // ---- ephemeral inline volumes ----

    @Test
    void ephemeralVolumeLivesFromPublishToUnpublish() throws Exception {
        String csiId = "csi-4f6c1d2e9a";
        Path target = nodeDir().resolve("pods").resolve("inline").resolve("mount");
        VolumeCapability cap = mount("ext4");
        NodePublishVolumeRequest request = NodePublishVolumeRequest.newBuilder().setVolumeId(csiId)
                .setTargetPath(target.toString()).setVolumeCapability(cap)
                .putVolumeContext("csi.storage.k8s.io/ephemeral", "true")
                .putVolumeContext("csi.storage.k8s.io/pod.name", "inline-pod")
                .putVolumeContext("csi4j.io/size", Long.toString(64 * MIB)).build();
        served().node.nodePublishVolume(request);
        var row = served().driver().catalog().volumes().byName("ephemeral-" + csiId).orElseThrow();
        assertEquals(64 * MIB, row.capacityBytes());
        assertTrue(Files.exists(served().image(row.id())));
        Files.writeString(target.resolve("scratch"), "temporary");
        assertEquals("ext4", MountTable.read().at(target).orElseThrow().fsType());
        served().node.nodePublishVolume(request);   // kubelet retries: still one volume
        assertEquals(1, served().driver().catalog().volumes().count());

        var stats = served().node.nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(csiId)
                .setVolumePath(target.toString()).build());
        assertTrue(stats.getUsage(0).getTotal() > 40 * MIB, stats.toString());
        assertFalse(stats.getVolumeCondition().getAbnormal());

        served().node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(csiId).setTargetPath(target.toString()).build());
        assertFalse(MountTable.read().isMountPoint(target));
        assertFalse(Files.exists(target));
        assertTrue(served().driver().catalog().volumes().byName("ephemeral-" + csiId).isEmpty(), "no catalog row left");
        assertFalse(Files.exists(served().image(row.id())), "no image left");
        assertEquals(Set.of(), served().driver().engine().volumeArtifacts());
        assertEquals(List.of(), LoopDevice.list().stream().filter(d -> d.backingFile().startsWith(served().volumesDir())).toList());
        try (var left = Files.list(served().config.dataDir().resolve("ephemeral"))) {
            assertEquals(List.of(), left.toList(), "the staging directory the plugin made is gone too");
        }
        // a second unpublish (kubelet retry) is fine
        served().node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(csiId).setTargetPath(target.toString()).build());
    }

    // ---- stats and condition ----

    @Test
    void statsReportBytesAndInodesOrTheDeviceSize() throws Exception {
        String fs = newVolume("stats-fs", 64 * MIB, mount("ext4"));
        Path staging = staging(fs);
        Path target = target(fs, "a");
        served().node.nodeStageVolume(stage(fs, staging, mount("ext4")));
        served().node.nodePublishVolume(publish(fs, staging, target, mount("ext4")));
        NodeGetVolumeStatsResponse before = stats(fs, target);
        VolumeUsage bytes = usage(before, VolumeUsage.Unit.BYTES);
        VolumeUsage inodes = usage(before, VolumeUsage.Unit.INODES);
        assertTrue(bytes.getTotal() > 50 * MIB && bytes.getTotal() <= 64 * MIB, before.toString());
        assertTrue(bytes.getAvailable() > 0 && bytes.getUsed() >= 0 && bytes.getUsed() + bytes.getAvailable() <= bytes.getTotal());
        assertTrue(inodes.getTotal() > 1000 && inodes.getUsed() > 0, before.toString());
        assertFalse(before.getVolumeCondition().getAbnormal());

        Files.write(target.resolve("four-mib"), new byte[4 << 20]);
        for (int i = 0; i < 10; i++) Files.createFile(target.resolve("f" + i));
        try (var ch = java.nio.channels.FileChannel.open(target.resolve("four-mib"), java.nio.file.StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        NodeGetVolumeStatsResponse after = stats(fs, target);
        assertTrue(usage(after, VolumeUsage.Unit.BYTES).getUsed() - bytes.getUsed() >= 4 * MIB, before + " -> " + after);
        assertEquals(inodes.getUsed() + 11, usage(after, VolumeUsage.Unit.INODES).getUsed());
        assertEquals(after, stats(fs, staging), "the staging path reports the same filesystem");

        String dev = newVolume("stats-dev", 24 * MIB, block());
        Path devStaging = staging(dev);
        Path devTarget = nodeDir().resolve("pods").resolve("dev").resolve("device");
        served().node.nodeStageVolume(stage(dev, devStaging, block()));
        served().node.nodePublishVolume(publish(dev, devStaging, devTarget, block()));
        NodeGetVolumeStatsResponse device = stats(dev, devTarget);
        assertEquals(1, device.getUsageCount());
        assertEquals(VolumeUsage.Unit.BYTES, device.getUsage(0).getUnit());
        assertEquals(24 * MIB, device.getUsage(0).getTotal());
        assertFalse(device.getVolumeCondition().getAbnormal());

        fails(Status.Code.NOT_FOUND, () -> stats(fs, nodeDir().resolve("nowhere")));
        fails(Status.Code.NOT_FOUND, () -> stats("vol-aaaaaaaaaaaaaaaa-node-a", target));
        // a relative volume_path names no volume of ours (spec: "does not exist on specified volume_path")
        Status relative = fails(Status.Code.NOT_FOUND, () -> stats(fs, Path.of("some/path")));
        assertTrue(relative.getDescription().contains("relative"), relative.getDescription());
        // what no kernel takes stays the caller's error
        fails(Status.Code.INVALID_ARGUMENT, () -> stats(fs, Path.of("some/" + "p".repeat(300))));
        fails(Status.Code.INVALID_ARGUMENT, () -> stats(fs, Path.of("/" + "p".repeat(300))));
        fails(Status.Code.INVALID_ARGUMENT, () -> served().node.nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder()
                .setVolumeId(fs).setVolumePath(target + "/\0nul").build()));

        unpublish(dev, devTarget);
        served().node.nodeUnstageVolume(unstage(dev, devStaging));
        unpublish(fs, target);
        served().node.nodeUnstageVolume(unstage(fs, staging));
    }

    @Test
    void aVolumeWhoseImageVanishedIsAbnormalAndCanStillBeTornDown() throws Exception {
        String id = newVolume("vanishing", 32 * MIB, mount("ext4"));
        Path staging = staging(id);
        Path target = target(id, "a");
        served().node.nodeStageVolume(stage(id, staging, mount("ext4")));
        served().node.nodePublishVolume(publish(id, staging, target, mount("ext4")));
        assertFalse(stats(id, target).getVolumeCondition().getAbnormal());

        Files.delete(served().image(id));   // an operator's mistake, or a failing disk
        NodeGetVolumeStatsResponse sick = stats(id, target);
        assertTrue(sick.getVolumeCondition().getAbnormal(), sick.toString());
        assertTrue(sick.getVolumeCondition().getMessage().contains("missing"), sick.getVolumeCondition().getMessage());
        var listed = served().controller.controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build());
        assertTrue(listed.getStatus().getVolumeCondition().getAbnormal(), listed.toString());

        // the CO tears the pod down: unpublish and unstage must still work, and leave nothing mounted
        unpublish(id, target);
        served().node.nodeUnstageVolume(unstage(id, staging));
        assertFalse(MountTable.read().isMountPoint(staging));
        waitForNoLoopUnder(served().volumesDir());

        // the same for a block volume (its loop device has no autoclear: unstage must detach it)
        String dev = newVolume("vanishing-dev", 16 * MIB, block());
        Path devStaging = staging(dev);
        Path devTarget = nodeDir().resolve("pods").resolve("dev").resolve("device");
        served().node.nodeStageVolume(stage(dev, devStaging, block()));
        served().node.nodePublishVolume(publish(dev, devStaging, devTarget, block()));
        Files.delete(served().image(dev));
        assertTrue(stats(dev, devTarget).getVolumeCondition().getAbnormal());
        unpublish(dev, devTarget);
        served().node.nodeUnstageVolume(unstage(dev, devStaging));
        waitForNoLoopUnder(served().volumesDir());
    }

    // ---- expansion ----

    @Test
    void xfsGrowsOnlineAndStatsShowIt() throws Exception {
        VolumeCapability cap = mount("xfs");
        String id = newVolume("grow-xfs", 300 * MIB, cap);
        Path staging = staging(id);
        Path target = target(id, "a");
        served().node.nodeStageVolume(stage(id, staging, cap));
        served().node.nodePublishVolume(publish(id, staging, target, cap));
        Files.writeString(target.resolve("kept"), "across the resize");
        long before = usage(stats(id, target), VolumeUsage.Unit.BYTES).getTotal();

        var controller = served().controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(id)
                .setCapacityRange(range(400 * MIB, 0)).setVolumeCapability(cap).build());
        assertTrue(controller.getNodeExpansionRequired());
        assertEquals(400 * MIB, loops(id).getFirst().size(), "the attached loop device picked up the new size");
        var node = served().node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(id)
                .setVolumePath(target.toString()).setStagingTargetPath(staging.toString())
                .setCapacityRange(range(400 * MIB, 0)).setVolumeCapability(cap).build());
        assertEquals(400 * MIB, node.getCapacityBytes());
        long after = usage(stats(id, target), VolumeUsage.Unit.BYTES).getTotal();
        assertTrue(after - before > 90 * MIB, "xfs grew online from " + before + " to " + after);
        assertEquals("across the resize", Files.readString(target.resolve("kept")));
        // a repeat converges
        assertEquals(400 * MIB, served().node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(id)
                .setVolumePath(target.toString()).build()).getCapacityBytes());
        fails(Status.Code.OUT_OF_RANGE, () -> served().node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(id)
                .setVolumePath(target.toString()).setCapacityRange(range(0, 200 * MIB)).build()));
        // as for NodeGetVolumeStats: a relative volume_path names no volume, one no kernel takes is the caller's error
        fails(Status.Code.NOT_FOUND, () -> served().node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(id)
                .setVolumePath("some/path").build()));
        fails(Status.Code.INVALID_ARGUMENT, () -> served().node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(id)
                .setVolumePath("/" + "p".repeat(300)).build()));

        unpublish(id, target);
        served().node.nodeUnstageVolume(unstage(id, staging));
    }

    @Test
    void ext4GrowsOnlineOrElseAtTheNextStage() throws Exception {
        VolumeCapability cap = mount("ext4");
        String id = newVolume("grow-ext4", 32 * MIB, cap);
        Path staging = staging(id);
        Path target = target(id, "a");
        served().node.nodeStageVolume(stage(id, staging, cap));
        served().node.nodePublishVolume(publish(id, staging, target, cap));
        served().controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(id)
                .setCapacityRange(range(96 * MIB, 0)).build());
        var expand = NodeExpandVolumeRequest.newBuilder().setVolumeId(id).setVolumePath(target.toString()).build();
        if (ScratchFilesystem.hasCapability(ScratchFilesystem.CAP_SYS_RESOURCE)) {
            assertEquals(96 * MIB, served().node.nodeExpandVolume(expand).getCapacityBytes());
        } else {
            // EXT4_IOC_RESIZE_FS needs CAP_SYS_RESOURCE: the spec's "cannot expand while published", clearly said
            Status status = fails(Status.Code.FAILED_PRECONDITION, () -> served().node.nodeExpandVolume(expand));
            assertTrue(status.getDescription().contains("CAP_SYS_RESOURCE"), status.getDescription());
            unpublish(id, target);
            served().node.nodeUnstageVolume(unstage(id, staging));
            served().node.nodeStageVolume(stage(id, staging, cap));   // grown offline here
            served().node.nodePublishVolume(publish(id, staging, target, cap));
        }
        long total = usage(stats(id, target), VolumeUsage.Unit.BYTES).getTotal();
        assertTrue(total > 80 * MIB, "ext4 fills the grown volume: " + total);
        unpublish(id, target);
        served().node.nodeUnstageVolume(unstage(id, staging));
    }

    @Test
    void aReadOnlyBlockPublicationCannotBeWritten() throws Exception {
        VolumeCapability multi = block(Mode.SINGLE_NODE_MULTI_WRITER);
        String id = newVolume("ro-dev", 16 * MIB, multi);
        Path staging = staging(id);
        Path writable = nodeDir().resolve("pods").resolve("rw").resolve("device");
        Path readOnly = nodeDir().resolve("pods").resolve("ro").resolve("device");
        served().node.nodeStageVolume(stage(id, staging, multi));
        served().node.nodePublishVolume(publish(id, staging, writable, multi));
        served().node.nodePublishVolume(publish(id, staging, readOnly, multi).toBuilder().setReadonly(true).build());
        ContentPattern.write(writable, 9);
        assertEquals(Optional.empty(), ContentPattern.mismatch(readOnly, 9), "the read-only device shows the same volume");
        assertThrowsIo(() -> ContentPattern.write(readOnly, 10));
        unpublish(id, readOnly);
        unpublish(id, writable);
        served().node.nodeUnstageVolume(unstage(id, staging));
        assertEquals(List.of(), LoopDevice.findByBackingFile(served().image(id)), "the read-only loop device went with its publication");
    }

    private static void assertThrowsIo(Runnable write) {
        try {
            write.run();
        } catch (java.io.UncheckedIOException expected) {
            return;
        }
        throw new AssertionError("writing a read-only publication succeeded");
    }

    @Test
    void aPublishedBlockVolumeGrows() {
        String id = newVolume("grow-dev", 16 * MIB, block());
        Path staging = staging(id);
        Path target = nodeDir().resolve("pods").resolve("dev").resolve("device");
        served().node.nodeStageVolume(stage(id, staging, block()));
        served().node.nodePublishVolume(publish(id, staging, target, block()));
        var grown = served().controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(id)
                .setCapacityRange(range(48 * MIB, 0)).build());
        assertFalse(grown.getNodeExpansionRequired());
        assertEquals(48 * MIB, BlockDevice.size(target), "the device the workload holds has the new size");
        assertEquals(48 * MIB, served().node.nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(id)
                .setVolumePath(target.toString()).build()).getCapacityBytes());
        unpublish(id, target);
        served().node.nodeUnstageVolume(unstage(id, staging));
    }

    // ---- plugin restarts ----

    @Test
    void aRestartBetweenStageAndPublishAdoptsTheStagedVolume() throws Exception {
        String id = newVolume("restart", 32 * MIB, mount("ext4"));
        Path staging = staging(id);
        Path target = target(id, "a");
        served().node.nodeStageVolume(stage(id, staging, mount("ext4")));
        Files.writeString(staging.resolve("before-restart"), "staged by the first plugin");
        MountInfo staged = MountTable.read().at(staging).orElseThrow();
        LoopDevice loop = loops(id).getFirst();
        Path image = served().image(id);

        served().stop();
        assertFalse(Files.exists(served().socket()), "the stopped plugin removed its socket");
        assertEquals(Optional.of(staged.id()), MountTable.read().at(staging).map(MountInfo::id), "stopping leaves the mount");
        assertEquals(List.of(loop), LoopDevice.findByBackingFile(image), "and the loop device");

        served().restart();
        served().node.nodeStageVolume(stage(id, staging, mount("ext4")));   // the CO may repeat the stage: adopted
        served().node.nodePublishVolume(publish(id, staging, target, mount("ext4")));
        assertEquals("staged by the first plugin", Files.readString(target.resolve("before-restart")));
        assertEquals(List.of(loop), loops(id), "no second loop device");
        assertEquals(1, MountTable.read().mounts().stream().filter(m -> m.mountPoint().equals(staging)).count(), "no second mount");
        assertEquals(staged.id(), MountTable.read().at(staging).orElseThrow().id());

        served().stop();   // and a published volume survives a stop too
        assertTrue(MountTable.read().isMountPoint(target));
        assertEquals("staged by the first plugin", Files.readString(target.resolve("before-restart")));
        served().restart();
        unpublish(id, target);
        served().node.nodeUnstageVolume(unstage(id, staging));
        assertEquals(List.of(), loops(id));
    }

    @Test
    void nodeCapabilities() {
        var caps = new HashSet<NodeServiceCapability.RPC.Type>();
        served().node.nodeGetCapabilities(NodeGetCapabilitiesRequest.getDefaultInstance())
                .getCapabilitiesList().forEach(c -> caps.add(c.getRpc().getType()));
        assertEquals(Set.of(NodeServiceCapability.RPC.Type.STAGE_UNSTAGE_VOLUME, NodeServiceCapability.RPC.Type.GET_VOLUME_STATS,
                NodeServiceCapability.RPC.Type.EXPAND_VOLUME, NodeServiceCapability.RPC.Type.VOLUME_CONDITION,
                NodeServiceCapability.RPC.Type.SINGLE_NODE_MULTI_WRITER, NodeServiceCapability.RPC.Type.VOLUME_MOUNT_GROUP), caps);
    }

    // ---- helpers ----

    private String newVolume(String name, long size, VolumeCapability capability) {
        return served().controller.createVolume(create(name, size, capability).build()).getVolume().getVolumeId();
    }

    private Path staging(String id) {
        return nodeDir().resolve("staging").resolve(id);
    }

    private Path target(String id, String pod) {
        return nodeDir().resolve("pods").resolve(pod).resolve(id).resolve("mount");
    }

    private static NodeUnstageVolumeRequest unstage(String id, Path staging) {
        return NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build();
    }

    private static void unpublish(String id, Path target) {
        served().node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target.toString()).build());
    }

    private static NodeGetVolumeStatsResponse stats(String id, Path path) {
        return served().node.nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(id).setVolumePath(path.toString()).build());
    }

    private static VolumeUsage usage(NodeGetVolumeStatsResponse stats, VolumeUsage.Unit unit) {
        return stats.getUsageList().stream().filter(u -> u.getUnit() == unit).findFirst().orElseThrow();
    }

    private static List<LoopDevice> loops(String id) {
        return LoopDevice.findByBackingFile(served().image(id));
    }

    private static void waitForNoLoopUnder(Path dir) throws InterruptedException {
        for (int i = 0; i < 100; i++) {
            if (LoopDevice.list().stream().noneMatch(d -> d.backingFile().startsWith(dir))) return;
            Thread.sleep(20);
        }
        throw new AssertionError("loop devices left: " + LoopDevice.list());
    }

    /** Runs a command as another user and group with no supplementary groups; its exit code. */
    private static int asUser(int uid, int gid, String... command) throws IOException, InterruptedException {
        var full = new java.util.ArrayList<>(List.of("setpriv", "--reuid", Integer.toString(uid), "--regid", Integer.toString(gid),
                "--clear-groups"));
        full.addAll(List.of(command));
        Process p = new ProcessBuilder(full).redirectErrorStream(true).start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        p.getInputStream().readAllBytes();
        return p.exitValue();
    }
}
