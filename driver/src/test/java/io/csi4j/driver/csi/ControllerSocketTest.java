package io.csi4j.driver.csi;

import static io.csi4j.driver.csi.Wire.MIB;
import static io.csi4j.driver.csi.Wire.block;
import static io.csi4j.driver.csi.Wire.create;
import static io.csi4j.driver.csi.Wire.fails;
import static io.csi4j.driver.csi.Wire.mount;
import static io.csi4j.driver.csi.Wire.range;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.model.State;
import io.csi4j.driver.os.BlockDevice;
import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.testing.ContentPattern;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.proto.csi.*;
import io.csi4j.proto.csi.VolumeCapability.AccessMode.Mode;
import io.grpc.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The controller (and identity) service over a real socket, image engine on its own XFS pool: the
 * capacity rules, idempotency, topology, content sources, delete preconditions, paging, capacity,
 * expansion and modification as a CO sees them, with the effects checked in the kernel and the pool.
 */
@ExtendWith(LeakCheck.class)
class ControllerSocketTest {
    @RegisterExtension
    static final ServedImagePool POOL = ServedImagePool.ofBytes(4L << 30);

    private static ServedDriver served() { return POOL.served(); }

    private static Path nodeDir() { return POOL.nodeDir(); }

    // ---- identity ----

    @Test
    void identityNamesThePluginAndItsPool() {
        GetPluginInfoResponse info = served().identity.getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
        assertEquals("local.csi4j.io", info.getName());
        assertFalse(info.getVendorVersion().isEmpty());
        assertEquals("image", info.getManifestOrThrow("engine"));
        assertEquals("yes", info.getManifestOrThrow("reflink"));
        assertEquals("xfs", info.getManifestOrThrow("pool-filesystem"));
        assertEquals(ServedDriver.NODE_ID, info.getManifestOrThrow("node"));
        assertTrue(served().identity.probe(ProbeRequest.getDefaultInstance()).getReady().getValue());

        var caps = served().identity.getPluginCapabilities(GetPluginCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList();
        Set<PluginCapability.Service.Type> services = new HashSet<>();
        caps.stream().filter(PluginCapability::hasService).forEach(c -> services.add(c.getService().getType()));
        assertEquals(Set.of(PluginCapability.Service.Type.CONTROLLER_SERVICE, PluginCapability.Service.Type.GROUP_CONTROLLER_SERVICE,
                PluginCapability.Service.Type.VOLUME_ACCESSIBILITY_CONSTRAINTS, PluginCapability.Service.Type.SNAPSHOT_METADATA_SERVICE), services);
        assertTrue(caps.stream().anyMatch(c -> c.hasVolumeExpansion()
                && c.getVolumeExpansion().getType() == PluginCapability.VolumeExpansion.Type.ONLINE));

        var controllerCaps = new HashSet<ControllerServiceCapability.RPC.Type>();
        served().controller.controllerGetCapabilities(ControllerGetCapabilitiesRequest.getDefaultInstance())
                .getCapabilitiesList().forEach(c -> controllerCaps.add(c.getRpc().getType()));
        assertTrue(controllerCaps.containsAll(List.of(ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME,
                ControllerServiceCapability.RPC.Type.CLONE_VOLUME, ControllerServiceCapability.RPC.Type.EXPAND_VOLUME,
                ControllerServiceCapability.RPC.Type.MODIFY_VOLUME, ControllerServiceCapability.RPC.Type.GET_CAPACITY,
                ControllerServiceCapability.RPC.Type.CREATE_DELETE_SNAPSHOT)), controllerCaps.toString());

        NodeGetInfoResponse nodeInfo = served().node.nodeGetInfo(NodeGetInfoRequest.getDefaultInstance());
        assertEquals(ServedDriver.NODE_ID, nodeInfo.getNodeId());
        assertEquals(Map.of(DriverConfig.TOPOLOGY_KEY, ServedDriver.NODE_ID), nodeInfo.getAccessibleTopology().getSegmentsMap());
    }

    // ---- CreateVolume ----

    @Test
    void capacityRangeRules() {
        // required only: at least that, rounded up to whole MiB
        Volume v = served().controller.createVolume(create("cap-required", 100 * MIB + 1, block()).build()).getVolume();
        assertEquals(101 * MIB, v.getCapacityBytes());
        assertEquals(101 * MIB, fileSize(served().image(v.getVolumeId())));

        // limit only: at most that
        Volume limited = served().controller.createVolume(create("cap-limit", 0, block())
                .setCapacityRange(range(0, 50 * MIB)).build()).getVolume();
        assertEquals(50 * MIB, limited.getCapacityBytes());

        // a window narrower than the engine's 1 MiB granule: OUT_OF_RANGE, and nothing made
        fails(Status.Code.OUT_OF_RANGE, () -> served().controller.createVolume(create("cap-window", 10 * MIB + 1, block())
                .setCapacityRange(range(10 * MIB + 1, 10 * MIB + 8192)).build()));
        // limits below the smallest filesystem: ext4 16 MiB, xfs 300 MiB
        fails(Status.Code.OUT_OF_RANGE, () -> served().controller.createVolume(create("cap-ext4", 0, mount("ext4"))
                .setCapacityRange(range(0, 8 * MIB)).build()));
        fails(Status.Code.OUT_OF_RANGE, () -> served().controller.createVolume(create("cap-xfs", 0, mount("xfs"))
                .setCapacityRange(range(100 * MIB, 200 * MIB)).build()));
        for (String name : List.of("cap-window", "cap-ext4", "cap-xfs")) {
            assertTrue(served().driver().catalog().volumes().byName(name).isEmpty(), name + " left a row");
        }
        assertEquals(Set.of(v.getVolumeId(), limited.getVolumeId()), served().driver().engine().volumeArtifacts());

        // limit below required
        fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.createVolume(create("cap-inverted", 0, block())
                .setCapacityRange(range(20 * MIB, 10 * MIB)).build()));
    }

    @Test
    void refusesWhatItCannotServe() {
        Status multi = fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.createVolume(
                create("multi", 16 * MIB, mount("ext4", Mode.MULTI_NODE_MULTI_WRITER)).build()));
        assertTrue(multi.getDescription().contains("MULTI_NODE_MULTI_WRITER"), multi.getDescription());

        Status unknown = fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.createVolume(
                create("param", 16 * MIB, block()).putParameters("speed", "fast").build()));
        assertTrue(unknown.getDescription().contains("speed") && unknown.getDescription().contains("csi4j.io/volume-group")
                && unknown.getDescription().contains("csi.storage.k8s.io/"), unknown.getDescription());

        fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.createVolume(create("btrfs-fs", 16 * MIB, mount("btrfs")).build()));
        fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.createVolume(create("mixed", 16 * MIB, block())
                .addVolumeCapabilities(mount("ext4")).build()));
        // replicas on other nodes need a cluster: one node cannot hold two (docs/replication.md)
        Status replicas = fails(Status.Code.RESOURCE_EXHAUSTED, () -> served().controller.createVolume(create("two", 16 * MIB, block())
                .putParameters("csi4j.io/replicas", "2").putParameters("csi4j.io/replication-interval", "10s").build()));
        assertTrue(replicas.getDescription().contains("csi4j.io/replicas=2"), replicas.getDescription());
        fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.createVolume(create("four", 16 * MIB, block())
                .putParameters("csi4j.io/replicas", "4").build()));
        fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.createVolume(create("interval-alone", 16 * MIB, block())
                .putParameters("csi4j.io/replication-interval", "30s").build()));
        fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.createVolume(create("interval-short", 16 * MIB, block())
                .putParameters("csi4j.io/replicas", "2").putParameters("csi4j.io/replication-interval", "1s").build()));
        assertEquals(0, served().driver().catalog().volumes().count());
        assertEquals(Set.of(), served().driver().engine().volumeArtifacts());
        // one replica is an ordinary volume
        Volume single = served().controller.createVolume(create("one", 16 * MIB, block())
                .putParameters("csi4j.io/replicas", "1").build()).getVolume();
        served().controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(single.getVolumeId()).build());
        assertEquals(0, served().driver().catalog().volumes().count());

        // the provisioner's extra metadata is accepted and kept
        Volume v = served().controller.createVolume(create("k8s", 16 * MIB, block())
                .putParameters("csi.storage.k8s.io/pvc/name", "data").build()).getVolume();
        assertEquals(Map.of("csi.storage.k8s.io/pvc/name", "data"),
                served().driver().catalog().volumes().byId(v.getVolumeId()).orElseThrow().parameters());
    }

    @Test
    void nameIsTheIdempotencyKey() {
        CreateVolumeRequest request = create("same-name", 32 * MIB, mount("ext4")).build();
        Volume first = served().controller.createVolume(request).getVolume();
        Volume again = served().controller.createVolume(request).getVolume();
        assertEquals(first, again);
        assertEquals(1, served().driver().catalog().volumes().count());

        Status size = fails(Status.Code.ALREADY_EXISTS, () -> served().controller.createVolume(
                create("same-name", 64 * MIB, mount("ext4")).build()));
        assertTrue(size.getDescription().contains(first.getVolumeId()), size.getDescription());
        fails(Status.Code.ALREADY_EXISTS, () -> served().controller.createVolume(create("same-name", 32 * MIB, block()).build()));
        fails(Status.Code.ALREADY_EXISTS, () -> served().controller.createVolume(create("same-name", 32 * MIB, mount("xfs")).build()));
        assertEquals(32 * MIB, fileSize(served().image(first.getVolumeId())), "the first volume is untouched");
    }

    @Test
    void topologyIsThisNode() {
        Volume v = served().controller.createVolume(create("topo", 16 * MIB, block()).build()).getVolume();
        assertEquals(List.of(Topology.newBuilder().putSegments("topology.csi4j.io/node", ServedDriver.NODE_ID).build()),
                v.getAccessibleTopologyList());

        Topology here = Topology.newBuilder().putSegments(DriverConfig.TOPOLOGY_KEY, ServedDriver.NODE_ID).build();
        Topology elsewhere = Topology.newBuilder().putSegments(DriverConfig.TOPOLOGY_KEY, "node-b").build();
        Status exhausted = fails(Status.Code.RESOURCE_EXHAUSTED, () -> served().controller.createVolume(create("topo-b", 16 * MIB, block())
                .setAccessibilityRequirements(TopologyRequirement.newBuilder().addRequisite(elsewhere).addPreferred(elsewhere)).build()));
        assertTrue(exhausted.getDescription().contains("node-b"), exhausted.getDescription());
        assertTrue(served().driver().catalog().volumes().byName("topo-b").isEmpty());

        Volume allowed = served().controller.createVolume(create("topo-ab", 16 * MIB, block())
                .setAccessibilityRequirements(TopologyRequirement.newBuilder().addRequisite(elsewhere).addRequisite(here)
                        .addPreferred(elsewhere)).build()).getVolume();
        assertEquals(ServedDriver.NODE_ID, allowed.getAccessibleTopology(0).getSegmentsOrThrow(DriverConfig.TOPOLOGY_KEY));
    }

    @Test
    void restoreAndCloneCarryTheContentAndMayBeLarger() throws Exception {
        Volume source = served().controller.createVolume(create("content-src", 16 * MIB, block()).build()).getVolume();
        String id = source.getVolumeId();
        Path staging = nodeDir().resolve("staging").resolve(id);
        Path target = nodeDir().resolve("pods").resolve("p1").resolve("dev");
        served().node.nodeStageVolume(Wire.stage(id, staging, block()));
        served().node.nodePublishVolume(Wire.publish(id, staging, target, block()));
        ContentPattern.write(target, 42);   // through the published block device, as a workload would

        Snapshot snap = served().controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("content-snap")
                .setSourceVolumeId(id).build()).getSnapshot();
        assertTrue(snap.getReadyToUse());
        assertEquals(16 * MIB, snap.getSizeBytes());
        served().node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target.toString()).build());
        served().node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
        ContentPattern.write(served().image(id), 43);   // the source changes afterwards; the snapshot must not

        Volume restored = served().controller.createVolume(create("restored", 32 * MIB, block())
                .setVolumeContentSource(VolumeContentSource.newBuilder().setSnapshot(
                        VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snap.getSnapshotId()))).build()).getVolume();
        assertEquals(32 * MIB, restored.getCapacityBytes());
        assertEquals(snap.getSnapshotId(), restored.getContentSource().getSnapshot().getSnapshotId());
        Volume clone = served().controller.createVolume(create("cloned", 24 * MIB, block())
                .setVolumeContentSource(VolumeContentSource.newBuilder().setVolume(
                        VolumeContentSource.VolumeSource.newBuilder().setVolumeId(id))).build()).getVolume();
        assertEquals(24 * MIB, clone.getCapacityBytes());

        for (var check : List.of(Map.entry(restored, 42L), Map.entry(clone, 43L))) {
            String vid = check.getKey().getVolumeId();
            Path s = nodeDir().resolve("staging").resolve(vid);
            Path t = nodeDir().resolve("pods").resolve(vid).resolve("dev");
            served().node.nodeStageVolume(Wire.stage(vid, s, block()));
            served().node.nodePublishVolume(Wire.publish(vid, s, t, block()));
            assertEquals(check.getKey().getCapacityBytes(), BlockDevice.size(t), "the device has the grown size");
            assertEquals(java.util.Optional.empty(), ContentPattern.mismatch(t, check.getValue()));
            served().node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(vid).setTargetPath(t.toString()).build());
            served().node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(vid).setStagingTargetPath(s.toString()).build());
        }

        fails(Status.Code.OUT_OF_RANGE, () -> served().controller.createVolume(create("restore-small", 0, block())
                .setCapacityRange(range(0, 8 * MIB))
                .setVolumeContentSource(VolumeContentSource.newBuilder().setSnapshot(
                        VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snap.getSnapshotId()))).build()));
        fails(Status.Code.NOT_FOUND, () -> served().controller.createVolume(create("restore-missing", 16 * MIB, block())
                .setVolumeContentSource(VolumeContentSource.newBuilder().setSnapshot(VolumeContentSource.SnapshotSource
                        .newBuilder().setSnapshotId("snap-aaaaaaaaaaaaaaaa-" + ServedDriver.NODE_ID))).build()));
    }

    @Test
    void aRestoredFilesystemGrowsToTheRestoredSize() throws Exception {
        Volume source = served().controller.createVolume(create("fs-src", 32 * MIB, mount("ext4")).build()).getVolume();
        String id = source.getVolumeId();
        Path staging = nodeDir().resolve("staging").resolve(id);
        served().node.nodeStageVolume(Wire.stage(id, staging, mount("ext4")));
        Files.writeString(staging.resolve("kept.txt"), "from the source");
        String snap = served().controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("fs-snap")
                .setSourceVolumeId(id).build()).getSnapshot().getSnapshotId();
        served().node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());

        String restored = served().controller.createVolume(create("fs-restored", 128 * MIB, mount("ext4"))
                .setVolumeContentSource(VolumeContentSource.newBuilder().setSnapshot(
                        VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snap))).build()).getVolume().getVolumeId();
        Path restoredStaging = nodeDir().resolve("staging").resolve(restored);
        served().node.nodeStageVolume(Wire.stage(restored, restoredStaging, mount("ext4")));
        try {
            assertEquals("from the source", Files.readString(restoredStaging.resolve("kept.txt")));
            long total = FsStats.of(restoredStaging).totalBytes();
            assertTrue(total > 100 * MIB, "the filesystem fills the restored 128 MiB: " + total);
        } finally {
            served().node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(restored)
                    .setStagingTargetPath(restoredStaging.toString()).build());
        }
    }

    // ---- ValidateVolumeCapabilities, ControllerPublishVolume, snapshots ----

    @Test
    void validateConfirmsOnlyWhatHolds() {
        Volume v = served().controller.createVolume(create("validate", 32 * MIB, mount("xfs", Mode.SINGLE_NODE_WRITER))
                .setCapacityRange(range(300 * MIB, 0)).build()).getVolume();
        var ok = served().controller.validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest.newBuilder()
                .setVolumeId(v.getVolumeId()).addVolumeCapabilities(mount("xfs"))
                .addVolumeCapabilities(mount("", Mode.SINGLE_NODE_MULTI_WRITER))
                .putAllVolumeContext(v.getVolumeContextMap()).putMutableParameters("readAheadKiB", "256").build());
        assertTrue(ok.hasConfirmed(), ok.toString());
        assertEquals(List.of(mount("xfs"), mount("", Mode.SINGLE_NODE_MULTI_WRITER)), ok.getConfirmed().getVolumeCapabilitiesList());

        for (var bad : List.of(
                ValidateVolumeCapabilitiesRequest.newBuilder().addVolumeCapabilities(block()),
                ValidateVolumeCapabilitiesRequest.newBuilder().addVolumeCapabilities(mount("ext4")),
                ValidateVolumeCapabilitiesRequest.newBuilder().addVolumeCapabilities(mount("xfs", Mode.MULTI_NODE_READER_ONLY)),
                ValidateVolumeCapabilitiesRequest.newBuilder().addVolumeCapabilities(mount("xfs")).putParameters("speed", "fast"),
                ValidateVolumeCapabilitiesRequest.newBuilder().addVolumeCapabilities(mount("xfs")).putMutableParameters("iops", "1"),
                ValidateVolumeCapabilitiesRequest.newBuilder().addVolumeCapabilities(mount("xfs"))
                        .putVolumeContext("csi4j.io/fs-type", "ext4"))) {
            var answer = served().controller.validateVolumeCapabilities(bad.setVolumeId(v.getVolumeId()).build());
            assertFalse(answer.hasConfirmed(), "confirmed " + bad);
            assertFalse(answer.getMessage().isEmpty());
        }
        fails(Status.Code.NOT_FOUND, () -> served().controller.validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest.newBuilder()
                .setVolumeId("vol-aaaaaaaaaaaaaaaa-" + ServedDriver.NODE_ID).addVolumeCapabilities(mount("xfs")).build()));
    }

    @Test
    void controllerPublishIsBookkeepingForThisNode() {
        String id = served().controller.createVolume(create("attach", 16 * MIB, block()).build()).getVolume().getVolumeId();
        var request = ControllerPublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(ServedDriver.NODE_ID)
                .setVolumeCapability(block()).build();
        served().controller.controllerPublishVolume(request);
        served().controller.controllerPublishVolume(request);   // idempotent
        fails(Status.Code.ALREADY_EXISTS, () -> served().controller.controllerPublishVolume(request.toBuilder().setReadonly(true).build()));
        fails(Status.Code.NOT_FOUND, () -> served().controller.controllerPublishVolume(request.toBuilder().setNodeId("node-b").build()));
        fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.controllerPublishVolume(request.toBuilder()
                .setVolumeCapability(mount("ext4")).build()));
        fails(Status.Code.NOT_FOUND, () -> served().controller.controllerPublishVolume(request.toBuilder()
                .setVolumeId("vol-aaaaaaaaaaaaaaaa-" + ServedDriver.NODE_ID).build()));
        assertEquals(List.of(ServedDriver.NODE_ID), served().controller.controllerGetVolume(ControllerGetVolumeRequest.newBuilder()
                .setVolumeId(id).build()).getStatus().getPublishedNodeIdsList());
        var unpublish = ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(ServedDriver.NODE_ID).build();
        served().controller.controllerUnpublishVolume(unpublish);
        served().controller.controllerUnpublishVolume(unpublish);   // idempotent
        assertEquals(List.of(), served().controller.controllerGetVolume(ControllerGetVolumeRequest.newBuilder()
                .setVolumeId(id).build()).getStatus().getPublishedNodeIdsList());
    }

    @Test
    void snapshotsAreIdempotentListedAndDeleted() {
        String a = served().controller.createVolume(create("snap-a", 16 * MIB, block()).build()).getVolume().getVolumeId();
        String b = served().controller.createVolume(create("snap-b", 16 * MIB, block()).build()).getVolume().getVolumeId();
        var request = CreateSnapshotRequest.newBuilder().setName("nightly").setSourceVolumeId(a).build();
        Snapshot first = served().controller.createSnapshot(request).getSnapshot();
        assertEquals(first, served().controller.createSnapshot(request).getSnapshot());
        fails(Status.Code.ALREADY_EXISTS, () -> served().controller.createSnapshot(request.toBuilder().setSourceVolumeId(b).build()));
        fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.createSnapshot(request.toBuilder().setName("p")
                .putParameters("retention", "7d").build()));
        fails(Status.Code.NOT_FOUND, () -> served().controller.createSnapshot(request.toBuilder().setName("missing")
                .setSourceVolumeId("vol-aaaaaaaaaaaaaaaa-" + ServedDriver.NODE_ID).build()));
        Snapshot ofB = served().controller.createSnapshot(request.toBuilder().setName("of-b").setSourceVolumeId(b).build()).getSnapshot();

        assertEquals(List.of(first), served().controller.listSnapshots(ListSnapshotsRequest.newBuilder().setSourceVolumeId(a).build())
                .getEntriesList().stream().map(ListSnapshotsResponse.Entry::getSnapshot).toList());
        assertEquals(List.of(ofB), served().controller.listSnapshots(ListSnapshotsRequest.newBuilder().setSnapshotId(ofB.getSnapshotId()).build())
                .getEntriesList().stream().map(ListSnapshotsResponse.Entry::getSnapshot).toList());
        assertEquals(first, served().controller.getSnapshot(GetSnapshotRequest.newBuilder().setSnapshotId(first.getSnapshotId()).build()).getSnapshot());

        // a snapshot outlives its source volume
        served().controller.deleteVolume(delete(a));
        assertEquals(first, served().controller.getSnapshot(GetSnapshotRequest.newBuilder().setSnapshotId(first.getSnapshotId()).build()).getSnapshot());
        var deleteSnapshot = DeleteSnapshotRequest.newBuilder().setSnapshotId(first.getSnapshotId()).build();
        served().controller.deleteSnapshot(deleteSnapshot);
        served().controller.deleteSnapshot(deleteSnapshot);   // idempotent
        fails(Status.Code.NOT_FOUND, () -> served().controller.getSnapshot(GetSnapshotRequest.newBuilder().setSnapshotId(first.getSnapshotId()).build()));
        assertEquals(Set.of(ofB.getSnapshotId()), served().driver().engine().snapshotArtifacts());
    }

    // ---- DeleteVolume ----

    @Test
    void deleteIsIdempotentAndRefusedWhileInUse() {
        String id = served().controller.createVolume(create("doomed", 16 * MIB, block()).build()).getVolume().getVolumeId();
        served().controller.controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(id)
                .setNodeId(ServedDriver.NODE_ID).setVolumeCapability(block()).build());
        Status published = fails(Status.Code.FAILED_PRECONDITION, () -> served().controller.deleteVolume(delete(id)));
        assertTrue(published.getDescription().contains(ServedDriver.NODE_ID), published.getDescription());
        assertTrue(Files.exists(served().image(id)));
        served().controller.controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id)
                .setNodeId(ServedDriver.NODE_ID).build());

        Path staging = nodeDir().resolve("staging").resolve(id);
        served().node.nodeStageVolume(Wire.stage(id, staging, block()));
        fails(Status.Code.FAILED_PRECONDITION, () -> served().controller.deleteVolume(delete(id)));
        served().node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());

        served().controller.deleteVolume(delete(id));
        assertFalse(Files.exists(served().image(id)));
        assertTrue(served().driver().catalog().volumes().byId(id).isEmpty());
        served().controller.deleteVolume(delete(id));                                            // again: OK
        served().controller.deleteVolume(delete("vol-aaaaaaaaaaaaaaaa-" + ServedDriver.NODE_ID)); // never existed: OK
        served().controller.deleteVolume(delete("../../etc/passwd"));                             // not ours: OK, nothing touched
        Status other = fails(Status.Code.FAILED_PRECONDITION, () -> served().controller.deleteVolume(delete("vol-aaaaaaaaaaaaaaaa-node-b")));
        assertTrue(other.getDescription().contains("node-b"), other.getDescription());
    }

    // ---- ListVolumes, GetCapacity ----

    @Test
    void listVolumesPagesThroughEverythingAndRefusesAForgedToken() {
        Set<String> made = new HashSet<>();
        for (int i = 0; i < 5; i++) made.add(served().controller.createVolume(create("list-" + i, 16 * MIB, block()).build()).getVolume().getVolumeId());
        String published = made.iterator().next();
        served().controller.controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(published)
                .setNodeId(ServedDriver.NODE_ID).setVolumeCapability(block()).build());

        List<String> seen = new ArrayList<>();
        String token = "";
        int pages = 0;
        do {
            ListVolumesResponse page = served().controller.listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(2)
                    .setStartingToken(token).build());
            assertTrue(page.getEntriesCount() <= 2);
            for (var e : page.getEntriesList()) {
                seen.add(e.getVolume().getVolumeId());
                assertEquals(e.getVolume().getVolumeId().equals(published) ? List.of(ServedDriver.NODE_ID) : List.of(),
                        e.getStatus().getPublishedNodeIdsList());
                assertFalse(e.getStatus().getVolumeCondition().getAbnormal());
            }
            token = page.getNextToken();
            pages++;
        } while (!token.isEmpty());
        assertEquals(3, pages);
        assertEquals(made, new HashSet<>(seen));
        assertEquals(5, seen.size(), "no volume twice");

        fails(Status.Code.ABORTED, () -> served().controller.listVolumes(ListVolumesRequest.newBuilder()
                .setStartingToken("not-a-token").build()));
        served().controller.controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(published).build());
    }

    @Test
    void getCapacityFollowsWhatIsProvisioned() {
        GetCapacityRequest mountHere = GetCapacityRequest.newBuilder().addVolumeCapabilities(mount("ext4"))
                .setAccessibleTopology(Topology.newBuilder().putSegments(DriverConfig.TOPOLOGY_KEY, ServedDriver.NODE_ID)).build();
        long before = served().controller.getCapacity(mountHere).getAvailableCapacity();
        assertEquals(served().driver().engine().pool().allocatableBytes(), before);
        assertTrue(before > 3L << 30, "a 4 GiB pool offers most of it: " + before);
        assertTrue(served().controller.getCapacity(mountHere).getMaximumVolumeSize().getValue() > 0);

        var poolBefore = served().driver().engine().pool();
        served().controller.createVolume(create("capacity", 256 * MIB, block()).build());
        var poolAfter = served().driver().engine().pool();
        long after = served().controller.getCapacity(mountHere).getAvailableCapacity();
        assertEquals(256 * MIB, poolAfter.provisionedBytes() - poolBefore.provisionedBytes(), "the 256 MiB are promised");
        assertEquals(poolAfter.allocatableBytes(), after);
        assertTrue(after < before && after <= poolAfter.totalBytes() - poolAfter.provisionedBytes(), before + " -> " + after);

        // more than is left: refused, nothing made
        fails(Status.Code.RESOURCE_EXHAUSTED, () -> served().controller.createVolume(create("too-big", after + MIB, block()).build()));
        assertTrue(served().driver().catalog().volumes().byName("too-big").isEmpty());

        assertEquals(0, served().controller.getCapacity(GetCapacityRequest.newBuilder().addVolumeCapabilities(block())
                .setAccessibleTopology(Topology.newBuilder().putSegments(DriverConfig.TOPOLOGY_KEY, "node-b")).build())
                .getAvailableCapacity(), "another node's capacity is not ours to report");
        assertEquals(0, served().controller.getCapacity(GetCapacityRequest.newBuilder()
                .addVolumeCapabilities(block(Mode.MULTI_NODE_MULTI_WRITER)).build()).getAvailableCapacity());
    }

    // ---- ControllerExpandVolume ----

    @Test
    void expansionAsksTheNodeOnlyForFilesystems() {
        String fs = served().controller.createVolume(create("grow-fs", 32 * MIB, mount("ext4")).build()).getVolume().getVolumeId();
        String dev = served().controller.createVolume(create("grow-dev", 32 * MIB, block()).build()).getVolume().getVolumeId();

        var grownFs = served().controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(fs)
                .setCapacityRange(range(48 * MIB, 0)).setVolumeCapability(mount("ext4")).build());
        assertEquals(48 * MIB, grownFs.getCapacityBytes());
        assertTrue(grownFs.getNodeExpansionRequired());
        var grownDev = served().controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(dev)
                .setCapacityRange(range(40 * MIB + 1, 0)).build());
        assertEquals(41 * MIB, grownDev.getCapacityBytes());
        assertFalse(grownDev.getNodeExpansionRequired());
        assertEquals(41 * MIB, fileSize(served().image(dev)));
        assertEquals(41 * MIB, served().controller.controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(dev).build())
                .getVolume().getCapacityBytes());

        // a repeat is OK; shrinking is not; the capability must fit
        assertEquals(41 * MIB, served().controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(dev)
                .setCapacityRange(range(40 * MIB + 1, 0)).build()).getCapacityBytes());
        fails(Status.Code.OUT_OF_RANGE, () -> served().controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder()
                .setVolumeId(dev).setCapacityRange(range(16 * MIB, 20 * MIB)).build()));
        fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder()
                .setVolumeId(dev).setCapacityRange(range(64 * MIB, 0)).setVolumeCapability(mount("ext4")).build()));
        fails(Status.Code.NOT_FOUND, () -> served().controller.controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder()
                .setVolumeId("vol-aaaaaaaaaaaaaaaa-" + ServedDriver.NODE_ID).setCapacityRange(range(64 * MIB, 0)).build()));
        assertEquals(41 * MIB, fileSize(served().image(dev)));
    }

    // ---- ControllerModifyVolume ----

    @Test
    void readAheadIsAppliedNowAndAtEveryLaterStage() {
        String id = served().controller.createVolume(create("read-ahead", 32 * MIB, mount("ext4")).build()).getVolume().getVolumeId();
        Path staging = nodeDir().resolve("staging").resolve(id);
        served().node.nodeStageVolume(Wire.stage(id, staging, mount("ext4")));
        LoopDevice first = onlyLoop(id);
        long kernelDefault = readAheadKiB(first);

        served().controller.controllerModifyVolume(modify(id, Map.of("readAheadKiB", "1024")));
        assertEquals(1024, readAheadKiB(first));
        assertEquals(2048, BlockDevice.readAheadSectors(first.node()));

        // nothing of a request with an unknown key or a bad value is applied
        Status unknown = fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.controllerModifyVolume(
                modify(id, Map.of("readAheadKiB", "256", "iops", "9000"))));
        assertTrue(unknown.getDescription().contains("iops") && unknown.getDescription().contains("readAheadKiB"), unknown.getDescription());
        fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.controllerModifyVolume(
                modify(id, Map.of("readAheadKiB", "256", "compression", "zstd"))));   // the pool is xfs: no compression
        fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.controllerModifyVolume(modify(id, Map.of("readAheadKiB", "lots"))));
        fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.controllerModifyVolume(modify(id, Map.of("readAheadKiB", "70000"))));
        assertEquals(1024, readAheadKiB(first));
        assertEquals(Map.of("readAheadKiB", "1024"), served().driver().catalog().volumes().byId(id).orElseThrow().mutableParameters());

        // a new stage is a new loop device: it gets the kept value
        served().node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
        served().node.nodeStageVolume(Wire.stage(id, staging, mount("ext4")));
        LoopDevice second = onlyLoop(id);
        assertEquals(1024, readAheadKiB(second));
        assertNotEquals(1024, kernelDefault, "the test must see a change");
        served().node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());

        fails(Status.Code.NOT_FOUND, () -> served().controller.controllerModifyVolume(
                modify("vol-aaaaaaaaaaaaaaaa-" + ServedDriver.NODE_ID, Map.of("readAheadKiB", "256"))));
    }

    @Test
    void aModifyWithNoParametersIsANoOpForAnExistingVolumeOnly() {
        // proto3 cannot tell an empty mutable_parameters from an absent one; an empty map asks for no change
        String plain = served().controller.createVolume(create("modify-empty", 16 * MIB, block()).build()).getVolume().getVolumeId();
        String tuned = served().controller.createVolume(create("modify-empty-tuned", 16 * MIB, block())
                .putMutableParameters("readAheadKiB", "512").build()).getVolume().getVolumeId();
        for (String id : List.of(plain, tuned)) {
            var before = served().driver().catalog().volumes().byId(id).orElseThrow();
            served().controller.controllerModifyVolume(modify(id, Map.of()));
            served().controller.controllerModifyVolume(modify(id, Map.of()));
            assertEquals(before, served().driver().catalog().volumes().byId(id).orElseThrow(), "no catalog write");
        }
        assertEquals(Map.of("readAheadKiB", "512"), served().driver().catalog().volumes().byId(tuned).orElseThrow().mutableParameters());
        Status missing = fails(Status.Code.NOT_FOUND, () -> served().controller.controllerModifyVolume(
                modify("vol-aaaaaaaaaaaaaaaa-" + ServedDriver.NODE_ID, Map.of())));
        assertTrue(missing.getDescription().contains("does not exist"), missing.getDescription());
        fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.controllerModifyVolume(modify("", Map.of())));
        served().controller.deleteVolume(delete(plain));
        served().controller.deleteVolume(delete(tuned));
    }

    @Test
    void createVolumeAppliesMutableParametersAtFirstStage() {
        String id = served().controller.createVolume(create("ra-create", 16 * MIB, block())
                .putMutableParameters("readAheadKiB", "2048").build()).getVolume().getVolumeId();
        Path staging = nodeDir().resolve("staging").resolve(id);
        served().node.nodeStageVolume(Wire.stage(id, staging, block()));
        assertEquals(2048, readAheadKiB(onlyLoop(id)));
        served().node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());

        fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.createVolume(create("ra-bad", 16 * MIB, block())
                .putMutableParameters("stripes", "4").build()));
        assertTrue(served().driver().catalog().volumes().byName("ra-bad").isEmpty());
    }

    // ---- group snapshots over the wire ----

    @Test
    void groupSnapshotOfTwoVolumes() {
        String a = served().controller.createVolume(create("ga", 16 * MIB, block()).build()).getVolume().getVolumeId();
        String b = served().controller.createVolume(create("gb", 16 * MIB, block()).build()).getVolume().getVolumeId();
        ContentPattern.write(served().image(a), 1);
        ContentPattern.write(served().image(b), 2);
        var request = CreateVolumeGroupSnapshotRequest.newBuilder().setName("gs").addSourceVolumeIds(a).addSourceVolumeIds(b).build();
        VolumeGroupSnapshot g = served().groupController.createVolumeGroupSnapshot(request).getGroupSnapshot();
        assertEquals(g, served().groupController.createVolumeGroupSnapshot(request).getGroupSnapshot(), "idempotent by name");
        assertEquals(2, g.getSnapshotsCount());
        for (Snapshot s : g.getSnapshotsList()) {
            assertEquals(g.getGroupSnapshotId(), s.getGroupSnapshotId());
            Path image = served().driver().engine().pool().path().resolve("snapshots").resolve(s.getSnapshotId() + ".img");
            assertEquals(java.util.Optional.empty(), ContentPattern.mismatch(image, s.getSourceVolumeId().equals(a) ? 1 : 2));
        }
        fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.deleteSnapshot(DeleteSnapshotRequest.newBuilder()
                .setSnapshotId(g.getSnapshots(0).getSnapshotId()).build()));
        fails(Status.Code.INVALID_ARGUMENT, () -> served().groupController.deleteVolumeGroupSnapshot(
                DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(g.getGroupSnapshotId())
                        .addSnapshotIds(g.getSnapshots(0).getSnapshotId()).build()));   // not all members
        served().groupController.deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder()
                .setGroupSnapshotId(g.getGroupSnapshotId())
                .addAllSnapshotIds(g.getSnapshotsList().stream().map(Snapshot::getSnapshotId).toList()).build());
        assertEquals(Set.of(), served().driver().engine().snapshotArtifacts());
        assertEquals(0, served().driver().catalog().snapshots().count(State.READY));
    }

    @Test
    void groupSnapshotCallsWithoutSnapshotIdsActOnTheCatalogsMembers() {
        // proto3 cannot tell an empty snapshot_ids from an absent one; csi4j knows each group's members
        String a = served().controller.createVolume(create("gna", 16 * MIB, block()).build()).getVolume().getVolumeId();
        String b = served().controller.createVolume(create("gnb", 16 * MIB, block()).build()).getVolume().getVolumeId();
        VolumeGroupSnapshot g = served().groupController.createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder()
                .setName("gs-no-ids").addSourceVolumeIds(a).addSourceVolumeIds(b).build()).getGroupSnapshot();
        var get = GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(g.getGroupSnapshotId());
        assertEquals(g, served().groupController.getVolumeGroupSnapshot(get.build()).getGroupSnapshot());
        // a list that is given is still checked against the members
        fails(Status.Code.INVALID_ARGUMENT, () -> served().groupController.getVolumeGroupSnapshot(
                get.clone().addSnapshotIds(g.getSnapshots(0).getSnapshotId()).build()));
        fails(Status.Code.INVALID_ARGUMENT, () -> served().groupController.deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder()
                .setGroupSnapshotId(g.getGroupSnapshotId()).addSnapshotIds(g.getSnapshots(1).getSnapshotId()).build()));

        var deleteGroup = DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(g.getGroupSnapshotId()).build();
        served().groupController.deleteVolumeGroupSnapshot(deleteGroup);
        assertEquals(Set.of(), served().driver().engine().snapshotArtifacts(), "every member deleted");
        assertEquals(0, served().driver().catalog().snapshots().count(State.READY));
        served().groupController.deleteVolumeGroupSnapshot(deleteGroup);   // gone: OK
        fails(Status.Code.NOT_FOUND, () -> served().groupController.getVolumeGroupSnapshot(get.build()));

        String unknown = "gsnap-aaaaaaaaaaaaaaaa-" + ServedDriver.NODE_ID;
        fails(Status.Code.NOT_FOUND, () -> served().groupController.getVolumeGroupSnapshot(
                GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(unknown).build()));
        served().groupController.deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(unknown).build());
        served().controller.deleteVolume(delete(a));
        served().controller.deleteVolume(delete(b));
    }

    // ---- helpers ----

    private static DeleteVolumeRequest delete(String id) {
        return DeleteVolumeRequest.newBuilder().setVolumeId(id).build();
    }

    private static ControllerModifyVolumeRequest modify(String id, Map<String, String> parameters) {
        return ControllerModifyVolumeRequest.newBuilder().setVolumeId(id).putAllMutableParameters(parameters).build();
    }

    private static LoopDevice onlyLoop(String volumeId) {
        List<LoopDevice> loops = LoopDevice.findByBackingFile(served().image(volumeId));
        assertEquals(1, loops.size(), loops.toString());
        return loops.getFirst();
    }

    /** What the kernel says, from sysfs (not through the driver's own ioctl). */
    static long readAheadKiB(LoopDevice device) {
        try {
            return Long.parseLong(Files.readString(Path.of("/sys/block/loop" + device.number() + "/queue/read_ahead_kb")).strip());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static long fileSize(Path file) {
        try {
            return Files.size(file);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
