package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.os.Freeze;
import io.csi4j.proto.cluster.FreezeVolumesRequest;
import io.csi4j.proto.cluster.NodeAgentGrpc;
import io.csi4j.proto.csi.*;
import io.grpc.Status;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A group snapshot whose members are on two agents (image engine, real loop devices and ext4): write-order
 * consistent across the nodes, nothing left behind when one node cannot freeze, and a freeze that lapses
 * when its thaw never comes.
 */
class ClusterGroupSnapshotTest {
    static final List<String> NODES = List.of("node-a", "node-b");

    @TempDir
    static Path tmp;
    static LocalCluster cluster;
    static ControllerGrpc.ControllerBlockingStub controller;
    static GroupControllerGrpc.GroupControllerBlockingStub groups;

    @BeforeAll
    static void start() throws Exception {
        Privileged.requireRoot();
        cluster = LocalCluster.start(tmp, NODES, EngineKind.IMAGE, OptionalLong.of(1L << 30));
        controller = ControllerGrpc.newBlockingStub(cluster.controllerChannel());
        groups = GroupControllerGrpc.newBlockingStub(cluster.controllerChannel());
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    static VolumeCapability ext4() {
        return VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.newBuilder().setFsType("ext4"))
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
    }

    static Volume create(String name, String node, VolumeContentSource source) {
        var request = CreateVolumeRequest.newBuilder().setName(name).addVolumeCapabilities(ext4())
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(64 << 20))
                .setAccessibilityRequirements(TopologyRequirement.newBuilder().addRequisite(ClusterRoutingTest.on(node)));
        if (source != null) request.setVolumeContentSource(source);
        return controller.createVolume(request.build()).getVolume();
    }

    static String nodeOf(String id) {
        return id.endsWith("-node-a") ? "node-a" : "node-b";
    }

    static final java.util.Map<String, NodeGrpc.NodeBlockingStub> NODE_STUBS = new java.util.concurrent.ConcurrentHashMap<>();

    static NodeGrpc.NodeBlockingStub node(String nodeId) {
        return NODE_STUBS.computeIfAbsent(nodeId, id -> NodeGrpc.newBlockingStub(cluster.nodeChannel(id)));
    }

    static Path stage(String volumeId) throws Exception {
        Path staging = Files.createDirectories(tmp.resolve("staging").resolve(volumeId));
        node(nodeOf(volumeId)).nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(volumeId)
                .setStagingTargetPath(staging.toString()).setVolumeCapability(ext4()).build());
        return staging;
    }

    static void unstage(String volumeId) {
        node(nodeOf(volumeId)).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(volumeId)
                .setStagingTargetPath(tmp.resolve("staging").resolve(volumeId).toString()).build());
    }

    static void delete(String volumeId) {
        controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(volumeId).build());
    }

    /**
     * The storage core's write-order property spread over two agents: record n goes to volume n % 3 (two on
     * node-a, one on node-b), each written synchronously before the next; the records present after restoring
     * the group snapshot must be exactly 0..k for some k.
     */
    @Test
    void aGroupSnapshotAcrossTwoAgentsIsWriteOrderConsistent() throws Exception {
        List<String> volumes = List.of(create("wo-1", "node-a", null).getVolumeId(), create("wo-2", "node-b", null).getVolumeId(),
                create("wo-3", "node-a", null).getVolumeId());
        List<FileChannel> logs = new ArrayList<>();
        AtomicBoolean stopWriting = new AtomicBoolean();
        AtomicLong written = new AtomicLong();
        try {
            for (String v : volumes) {
                logs.add(FileChannel.open(stage(v).resolve("log"), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                        StandardOpenOption.APPEND, StandardOpenOption.DSYNC));
            }
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                try {
                    for (long seq = 0; !stopWriting.get() && seq < 5_000_000; seq++) {
                        logs.get((int) (seq % 3)).write(ByteBuffer.wrap((seq + "\n").getBytes(StandardCharsets.US_ASCII)));
                        written.set(seq + 1);
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, r -> Thread.ofPlatform().daemon().name("sequence-writer").start(r));
            awaitWritten(written, 300);
            long before = written.get();
            VolumeGroupSnapshot made = groups.createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder()
                    .setName("write-order").addAllSourceVolumeIds(volumes).build()).getGroupSnapshot();
            long after = written.get();
            awaitWritten(written, after + 100);  // the writer goes on after the thaw
            stopWriting.set(true);
            writer.get(60, TimeUnit.SECONDS);
            assertTrue(made.getGroupSnapshotId().endsWith("-_cluster"), made.getGroupSnapshotId());

            TreeSet<Long> present = new TreeSet<>();
            int n = 0;
            for (Snapshot member : made.getSnapshotsList()) {
                String restored = create("wo-restored-" + n++, nodeOf(member.getSnapshotId()), VolumeContentSource.newBuilder()
                        .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(member.getSnapshotId())).build()).getVolumeId();
                for (String line : Files.readAllLines(stage(restored).resolve("log"))) present.add(Long.parseLong(line));
                unstage(restored);
                delete(restored);
            }
            long newest = present.last();
            assertTrue(newest + 1 >= before && newest < after + 1, "cut between " + before + " and " + after + ": " + newest);
            assertEquals(newest + 1, present.size(), "records 0.." + newest + " with none missing");
            groups.deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(made.getGroupSnapshotId()).build());
        } finally {
            stopWriting.set(true);
            for (FileChannel log : logs) log.close();
            for (String v : volumes) {
                unstage(v);
                delete(v);
            }
        }
    }

    /** One node cannot freeze (a member is frozen already): every node thaws, no part and no member snapshot is left. */
    @Test
    void aNodeThatCannotFreezeLeavesNothingAndThawsTheOthers() throws Exception {
        String a = create("busy-a", "node-a", null).getVolumeId();
        String b = create("busy-b", "node-b", null).getVolumeId();
        Path stagedA = stage(a);
        Path stagedB = stage(b);
        try {
            try (Freeze.Frozen held = Freeze.freeze(stagedB)) {
                var e = assertThrows(io.grpc.StatusRuntimeException.class, () -> groups.createVolumeGroupSnapshot(
                        CreateVolumeGroupSnapshotRequest.newBuilder().setName("busy").addSourceVolumeIds(a).addSourceVolumeIds(b).build()));
                assertEquals(Status.Code.ABORTED, e.getStatus().getCode(), e.getStatus().toString());
            }
            for (String v : List.of(a, b)) {
                assertEquals(0, controller.listSnapshots(ListSnapshotsRequest.newBuilder().setSourceVolumeId(v).build()).getEntriesCount());
            }
            // node-a was frozen and must be thawed again: a write there completes
            CompletableFuture<Void> write = CompletableFuture.runAsync(() -> {
                try {
                    Files.writeString(stagedA.resolve("after"), "thawed", StandardOpenOption.CREATE, StandardOpenOption.SYNC);
                } catch (Exception ex) {
                    throw new IllegalStateException(ex);
                }
            }, r -> Thread.ofPlatform().daemon().start(r));
            write.get(20, TimeUnit.SECONDS);
            // and the same request goes through once the node can freeze
            var made = groups.createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder().setName("busy")
                    .addSourceVolumeIds(a).addSourceVolumeIds(b).build()).getGroupSnapshot();
            assertEquals(2, made.getSnapshotsCount());
            groups.deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(made.getGroupSnapshotId()).build());
        } finally {
            for (String v : List.of(a, b)) {
                unstage(v);
                delete(v);
            }
        }
    }

    /** csi4j snapshot allocated|delta work through the controller: the stream is the owning agent's, relayed. */
    @Test
    void snapshotMetadataIsRelayedFromTheOwningAgent() throws Exception {
        var identity = IdentityGrpc.newBlockingStub(cluster.controllerChannel());
        assertTrue(identity.getPluginCapabilities(GetPluginCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList().stream()
                .anyMatch(c -> c.getService().getType() == PluginCapability.Service.Type.SNAPSHOT_METADATA_SERVICE),
                "the controller advertises what its agents serve");
        String v = create("metadata", "node-b", null).getVolumeId();
        Path staged = stage(v);
        try {
            Files.write(staged.resolve("first"), new byte[1 << 20]);
            try (var ch = FileChannel.open(staged.resolve("first"), StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap("not zero".repeat(1000).getBytes(StandardCharsets.US_ASCII)), 4096);
                ch.force(true);
            }
            String base = controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("metadata-1").setSourceVolumeId(v).build())
                    .getSnapshot().getSnapshotId();
            Files.writeString(staged.resolve("second"), "more".repeat(10_000), StandardOpenOption.CREATE, StandardOpenOption.SYNC);
            String target = controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("metadata-2").setSourceVolumeId(v).build())
                    .getSnapshot().getSnapshotId();
            var routed = SnapshotMetadataGrpc.newBlockingStub(cluster.controllerChannel());
            var direct = SnapshotMetadataGrpc.newBlockingStub(cluster.agentChannel("node-b", cluster.controllerTls));
            var allocated = GetMetadataAllocatedRequest.newBuilder().setSnapshotId(base).setMaxResults(2).build();
            List<GetMetadataAllocatedResponse> viaController = new ArrayList<>();
            routed.getMetadataAllocated(allocated).forEachRemaining(viaController::add);
            List<GetMetadataAllocatedResponse> straight = new ArrayList<>();
            direct.getMetadataAllocated(allocated).forEachRemaining(straight::add);
            assertEquals(straight, viaController, "the same messages, in the same pieces");
            assertTrue(viaController.size() > 1 && viaController.getFirst().getVolumeCapacityBytes() == 64 << 20, viaController.toString());
            var delta = GetMetadataDeltaRequest.newBuilder().setBaseSnapshotId(base).setTargetSnapshotId(target).build();
            List<GetMetadataDeltaResponse> deltaVia = new ArrayList<>();
            routed.getMetadataDelta(delta).forEachRemaining(deltaVia::add);
            List<GetMetadataDeltaResponse> deltaStraight = new ArrayList<>();
            direct.getMetadataDelta(delta).forEachRemaining(deltaStraight::add);
            assertEquals(deltaStraight, deltaVia);
            assertTrue(deltaVia.stream().mapToInt(GetMetadataDeltaResponse::getBlockMetadataCount).sum() > 0, "the second file changed blocks");
            var e = assertThrows(io.grpc.StatusRuntimeException.class, () -> routed.getMetadataAllocated(GetMetadataAllocatedRequest.newBuilder()
                    .setSnapshotId(base.replace("-node-b", "-node-z")).build()).forEachRemaining(m -> {}));
            assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode(), e.getStatus().toString());
            for (String s : List.of(base, target)) controller.deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(s).build());
        } finally {
            unstage(v);
            delete(v);
        }
    }

    /** ControllerReclaimSpace through the controller: the volume's node gives back what its filesystem no longer uses. */
    @Test
    void reclaimSpaceGoesToTheVolumesNode() throws Exception {
        var addons = io.csi4j.proto.addons.identity.IdentityGrpc.newBlockingStub(cluster.controllerAddonsChannel());
        assertTrue(addons.getCapabilities(io.csi4j.proto.addons.identity.GetCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList()
                .stream().anyMatch(c -> c.getReclaimSpace().getType() == io.csi4j.proto.addons.identity.Capability.ReclaimSpace.Type.OFFLINE),
                "the controller offers offline reclaim when its agents can");
        String v = create("reclaim", "node-b", null).getVolumeId();
        Path staged = stage(v);
        try {
            Path big = staged.resolve("big");
            byte[] chunk = new byte[1 << 20];
            new java.util.Random(7).nextBytes(chunk);
            try (var ch = FileChannel.open(big, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                for (int i = 0; i < 24; i++) ch.write(ByteBuffer.wrap(chunk));
                ch.force(true);
            }
            Files.delete(big);
        } finally {
            unstage(v);   // offline: nobody has it staged
        }
        try {
            var reclaim = io.csi4j.proto.addons.reclaimspace.ReclaimSpaceControllerGrpc.newBlockingStub(cluster.controllerAddonsChannel());
            var answer = reclaim.controllerReclaimSpace(io.csi4j.proto.addons.reclaimspace.ControllerReclaimSpaceRequest.newBuilder()
                    .setVolumeId(v).build());
            long freed = answer.getPreUsage().getUsageBytes() - answer.getPostUsage().getUsageBytes();
            assertTrue(freed >= 20L << 20, "the deleted 24 MiB came back: " + answer);
            var e = assertThrows(io.grpc.StatusRuntimeException.class, () -> reclaim.controllerReclaimSpace(
                    io.csi4j.proto.addons.reclaimspace.ControllerReclaimSpaceRequest.newBuilder().setVolumeId(v.replace("-node-b", "-node-z")).build()));
            assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode(), e.getStatus().toString());
        } finally {
            delete(v);
        }
    }

    /** A freeze whose thaw never comes (the controller died between the steps) lapses by itself. */
    @Test
    void aFreezeHoldLapsesWithoutItsThaw() throws Exception {
        String a = create("lapse-a", "node-a", null).getVolumeId();
        Path staged = stage(a);
        try {
            var agent = NodeAgentGrpc.newBlockingStub(cluster.agentChannel("node-a", cluster.controllerTls));
            long start = System.nanoTime();
            agent.freezeVolumes(FreezeVolumesRequest.newBuilder().setHoldId("forgotten").addVolumeIds(a).setHoldMillis(1500).build());
            CompletableFuture<Void> write = CompletableFuture.runAsync(() -> {
                try {
                    Files.writeString(staged.resolve("waits"), "for the thaw", StandardOpenOption.CREATE, StandardOpenOption.SYNC);
                } catch (Exception ex) {
                    throw new IllegalStateException(ex);
                }
            }, r -> Thread.ofPlatform().daemon().start(r));
            write.get(30, TimeUnit.SECONDS);
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(waitedMs >= 1000, "the write waited for the lapse: " + waitedMs + " ms");
        } finally {
            unstage(a);
            delete(a);
        }
    }

    private static void awaitWritten(AtomicLong written, long target) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (written.get() < target) {
            if (System.nanoTime() > deadline) fail("the writer did not reach " + target + " records in 60 s (at " + written.get() + ")");
            Thread.sleep(5);
        }
    }
}
