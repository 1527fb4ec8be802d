package io.csi4j.driver.csi;

import static io.csi4j.driver.csi.Wire.MIB;
import static io.csi4j.driver.csi.Wire.block;
import static io.csi4j.driver.csi.Wire.create;
import static io.csi4j.driver.csi.Wire.fails;
import static io.csi4j.driver.csi.Wire.mount;
import static io.csi4j.driver.csi.Wire.publish;
import static io.csi4j.driver.csi.Wire.stage;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.Reflink;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.csi.*;
import io.csi4j.proto.csi.VolumeCapability.AccessMode.Mode;
import io.grpc.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The {@code dir} engine served over a socket, its pool a plain directory on the machine's disk:
 * filesystem volumes only, bind-mounted directories, snapshots as tree copies, and group snapshots
 * refused while a member is published writable.
 */
@ExtendWith(LeakCheck.class)
class DirEngineSocketTest {
    private static Path dataRoot;
    private static ServedDriver served;
    private Path nodeDir;

    @BeforeAll
    static void startPlugin() throws Exception {
        Privileged.requireRoot();
        dataRoot = Files.createTempDirectory("csi4j-dir-engine-");
        served = ServedDriver.plainPool(dataRoot.resolve("data"), EngineKind.DIR);
    }

    @AfterAll
    static void stopPlugin() {
        try {
            if (served != null) served.close();
        } finally {
            if (dataRoot != null) ServedDriver.deleteTree(dataRoot);
        }
    }

    @BeforeEach
    void nodeDir(TestInfo test) {
        nodeDir = served.nodeDir(test.getTestMethod().orElseThrow().getName());
    }

    @AfterEach
    void cleanUp() {
        assertEquals(List.of(), served.cleanUp(nodeDir), "the test left mounts");
    }

    @Test
    void identityAndCapacityTellItIsADirectoryPool() {
        var info = served.identity.getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
        assertEquals("local.csi4j.io", info.getName());
        assertEquals("dir", info.getManifestOrThrow("engine"));
        Path pool = served.driver().engine().pool().path();
        assertEquals(Reflink.isSupported(pool) ? "yes" : "no", info.getManifestOrThrow("reflink"));
        assertTrue(served.identity.probe(ProbeRequest.getDefaultInstance()).getReady().getValue());

        assertEquals(0, served.controller.getCapacity(GetCapacityRequest.newBuilder().addVolumeCapabilities(block()).build())
                .getAvailableCapacity(), "no block volumes here");
        assertTrue(served.controller.getCapacity(GetCapacityRequest.newBuilder().addVolumeCapabilities(mount("")).build())
                .getAvailableCapacity() > 0);
        Status refused = fails(Status.Code.INVALID_ARGUMENT, () -> served.controller.createVolume(create("dev", 16 * MIB, block()).build()));
        assertTrue(refused.getDescription().contains("dir"), refused.getDescription());
        fails(Status.Code.INVALID_ARGUMENT, () -> served.controller.controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder()
                .setVolumeId(served.controller.createVolume(create("ra", 16 * MIB, mount("")).build()).getVolume().getVolumeId())
                .putMutableParameters("readAheadKiB", "512").build()));
    }

    @Test
    void aDirectoryVolumeIsPublishedSnapshottedAndRestored() throws Exception {
        VolumeCapability cap = mount("");
        String id = served.controller.createVolume(create("tree", 64 * MIB, cap).build()).getVolume().getVolumeId();
        Path staging = nodeDir.resolve("staging").resolve(id);
        Path target = nodeDir.resolve("pods").resolve("a").resolve("mount");
        served.node.nodeStageVolume(stage(id, staging, cap));
        served.node.nodePublishVolume(publish(id, staging, target, cap));
        served.node.nodePublishVolume(publish(id, staging, target, cap));
        Files.createDirectories(target.resolve("sub"));
        Files.writeString(target.resolve("sub").resolve("file.txt"), "in the tree");
        fails(Status.Code.FAILED_PRECONDITION, () -> served.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder()
                .setVolumeId(id).setStagingTargetPath(staging.toString()).build()));

        String snap = served.controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("tree-snap")
                .setSourceVolumeId(id).build()).getSnapshot().getSnapshotId();
        Files.writeString(target.resolve("sub").resolve("file.txt"), "changed after the snapshot");

        Status group = fails(Status.Code.FAILED_PRECONDITION, () -> served.groupController.createVolumeGroupSnapshot(
                CreateVolumeGroupSnapshotRequest.newBuilder().setName("tree-group").addSourceVolumeIds(id).build()));
        assertTrue(group.getDescription().contains("write-order"), group.getDescription());
        assertTrue(served.driver().catalog().groupSnapshots().byName("tree-group").isEmpty());

        served.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target.toString()).build());
        assertFalse(MountTable.read().isMountPoint(target));
        served.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
        // not published: a group snapshot is fine now
        var g = served.groupController.createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder()
                .setName("tree-group").addSourceVolumeIds(id).build()).getGroupSnapshot();
        assertEquals(1, g.getSnapshotsCount());

        String restored = served.controller.createVolume(create("tree-restored", 64 * MIB, cap)
                .setVolumeContentSource(VolumeContentSource.newBuilder().setSnapshot(
                        VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snap))).build()).getVolume().getVolumeId();
        Path restoredTarget = nodeDir.resolve("pods").resolve("b").resolve("mount");
        Path restoredStaging = nodeDir.resolve("staging").resolve(restored);
        served.node.nodeStageVolume(stage(restored, restoredStaging, cap));
        served.node.nodePublishVolume(publish(restored, restoredStaging, restoredTarget, cap).toBuilder().setReadonly(true).build());
        assertEquals("in the tree", Files.readString(restoredTarget.resolve("sub").resolve("file.txt")));
        assertTrue(MountTable.read().at(restoredTarget).orElseThrow().readOnly());
        served.node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(restored)
                .setTargetPath(restoredTarget.toString()).build());
        served.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(restored)
                .setStagingTargetPath(restoredStaging.toString()).build());
    }

    @Test
    void capacityIsRecordedNotEnforced() {
        String id = served.controller.createVolume(create("sized", 64 * MIB + 1, mount("")).build()).getVolume().getVolumeId();
        assertEquals(65 * MIB, served.controller.controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build())
                .getVolume().getCapacityBytes(), "the size asked for, in whole MiB");
        var grown = served.controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(id)
                .setCapacityRange(Wire.range(128 * MIB, 0)).build());
        assertEquals(128 * MIB, grown.getCapacityBytes());
        assertEquals(Map.of(), served.driver().catalog().volumes().byId(id).orElseThrow().mutableParameters());
        fails(Status.Code.INVALID_ARGUMENT, () -> served.controller.createVolume(create("multi", 16 * MIB,
                mount("", Mode.MULTI_NODE_READER_ONLY)).build()));
    }
}
