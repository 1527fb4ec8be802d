package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.csi.*;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.function.Executable;

/**
 * The cluster controller in front of three node agents on this machine (dir engine, 127.0.0.1, mutual TLS):
 * placement by topology, merged paging, ids of unknown nodes, silent agents, and the TLS boundary.
 */
class ClusterRoutingTest {
    static final String KEY = "topology.csi4j.io/node";
    static final List<String> NODES = List.of("node-a", "node-b", "node-c");

    @TempDir
    static Path tmp;
    static LocalCluster cluster;
    static ControllerGrpc.ControllerBlockingStub controller;

    @BeforeAll
    static void start() throws Exception {
        Privileged.requireRoot();  // the driver's pool and catalog files are made as root in CI
        cluster = LocalCluster.start(tmp, NODES);
        controller = ControllerGrpc.newBlockingStub(cluster.controllerChannel());
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    static Topology on(String node) {
        return Topology.newBuilder().putSegments(KEY, node).build();
    }

    static CreateVolumeRequest.Builder volume(String name) {
        return CreateVolumeRequest.newBuilder().setName(name)
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(1 << 20))
                .addVolumeCapabilities(VolumeCapability.newBuilder()
                        .setMount(VolumeCapability.MountVolume.getDefaultInstance())
                        .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)));
    }

    static Volume createOn(String name, String node) {
        return createOn(controller, name, node);
    }

    static Volume createOn(ControllerGrpc.ControllerBlockingStub controller, String name, String node) {
        return controller.createVolume(volume(name).setAccessibilityRequirements(TopologyRequirement.newBuilder()
                .addRequisite(on(node)).addPreferred(on(node))).build()).getVolume();
    }

    static StatusRuntimeException fails(Status.Code code, Executable call) {
        var e = assertThrows(StatusRuntimeException.class, call);
        assertEquals(code, e.getStatus().getCode(), () -> "status " + e.getStatus());
        return e;
    }

    /** A forwarded call carries the CO's deadline to the agent (the controller's own 60 s here when the CO has none). */
    @Test
    void theCosDeadlineReachesTheAgent() {
        Volume v = createOn("deadline", "node-b");
        var get = io.csi4j.proto.csi.ControllerGetVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).build();
        String method = ControllerGrpc.getControllerGetVolumeMethod().getFullMethodName();
        controller.withDeadlineAfter(7, java.util.concurrent.TimeUnit.SECONDS).controllerGetVolume(get);
        long left = cluster.agentDeadlines.get(method).timeRemaining(java.util.concurrent.TimeUnit.MILLISECONDS);
        assertTrue(left > 0 && left <= 7000, "the agent's deadline, ms left: " + left);
        controller.controllerGetVolume(get);
        left = cluster.agentDeadlines.get(method).timeRemaining(java.util.concurrent.TimeUnit.MILLISECONDS);
        assertTrue(left > 7000 && left <= 60_000, "without the CO's deadline the controller's call timeout, ms left: " + left);
    }

    @Test
    void createGoesToTheNodeTheTopologyNames() {
        Volume v = controller.createVolume(volume("by-topology").setAccessibilityRequirements(TopologyRequirement.newBuilder()
                .addRequisite(on("node-a")).addRequisite(on("node-b")).addRequisite(on("node-c"))
                .addPreferred(on("node-b")).addPreferred(on("node-a"))).build()).getVolume();
        assertTrue(v.getVolumeId().endsWith("-node-b"), v.getVolumeId());
        assertEquals(List.of(on("node-b")), v.getAccessibleTopologyList());
        // idempotent by name: the same request lands on the same node and answers the same volume
        Volume again = createOn("by-topology", "node-b");
        assertEquals(v.getVolumeId(), again.getVolumeId());
        // node b's own catalog has it, the others do not
        assertTrue(cluster.nodes.get("node-b").driver().volumes().reads().listing(0, 100).items().stream().anyMatch(x -> x.id().equals(v.getVolumeId())));
        assertTrue(cluster.nodes.get("node-a").driver().volumes().reads().listing(0, 100).items().stream().noneMatch(x -> x.id().equals(v.getVolumeId())));
        assertEquals(v.getVolumeId(), controller.controllerGetVolume(ControllerGetVolumeRequest.newBuilder()
                .setVolumeId(v.getVolumeId()).build()).getVolume().getVolumeId());
    }

    @Test
    void publishingToAnotherNodeIsRefusedNamingBoth() {
        Volume v = createOn("publish-elsewhere", "node-a");
        var request = ControllerPublishVolumeRequest.newBuilder().setVolumeId(v.getVolumeId())
                .setVolumeCapability(volume("x").getVolumeCapabilities(0));
        var e = fails(Status.Code.FAILED_PRECONDITION, () -> controller.controllerPublishVolume(request.setNodeId("node-b").build()));
        assertTrue(e.getStatus().getDescription().contains("node-a") && e.getStatus().getDescription().contains("node-b"),
                e.getStatus().getDescription());
        fails(Status.Code.NOT_FOUND, () -> controller.controllerPublishVolume(request.setNodeId("node-z").build()));
        controller.controllerPublishVolume(request.setNodeId("node-a").build());
        controller.controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder()
                .setVolumeId(v.getVolumeId()).setNodeId("node-a").build());
    }

    @Test
    void requisiteOfNoNodeIsResourceExhausted() {
        var e = fails(Status.Code.RESOURCE_EXHAUSTED, () -> controller.createVolume(volume("nowhere")
                .setAccessibilityRequirements(TopologyRequirement.newBuilder().addRequisite(on("node-z"))).build()));
        assertTrue(e.getStatus().getDescription().contains("node-z"), e.getStatus().getDescription());
    }

    @Test
    void listsAreMergedAcrossNodesWithPaging() {
        List<String> made = new ArrayList<>();
        for (String node : NODES) for (int i = 0; i < 3; i++) made.add(createOn("listed-" + node + "-" + i, node).getVolumeId());
        List<String> seen = new ArrayList<>();
        String token = "";
        int pages = 0;
        do {
            var page = controller.listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(2).setStartingToken(token).build());
            assertTrue(page.getEntriesCount() <= 2, "max_entries is honoured");
            page.getEntriesList().forEach(e -> seen.add(e.getVolume().getVolumeId()));
            token = page.getNextToken();
            assertTrue(token.length() <= 128, () -> "next_token within the spec's 128 bytes: " + page.getNextToken().length());
            pages++;
        } while (!token.isEmpty());
        assertTrue(pages >= made.size() / 2, "paged: " + pages);
        assertEquals(seen.size(), seen.stream().distinct().count(), "no volume twice: " + seen);
        assertTrue(seen.containsAll(made), "every volume of every node: " + seen);
        // stable order: node by node, in node id order
        List<String> nodeOrder = seen.stream().map(id -> id.substring(id.lastIndexOf("-node-") + 1)).toList();
        assertEquals(nodeOrder.stream().sorted().toList(), nodeOrder, "node by node in node id order");
        // without paging: the same set in the same order
        var all = controller.listVolumes(ListVolumesRequest.getDefaultInstance());
        assertEquals(seen, all.getEntriesList().stream().map(e -> e.getVolume().getVolumeId()).toList());
    }

    @Test
    void pageTokensAreTamperProof() {
        for (String node : NODES) createOn("tamper-" + node, node);
        String token = controller.listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(1).build()).getNextToken();
        assertFalse(token.isEmpty());
        char[] chars = token.toCharArray();
        chars[chars.length / 2] = chars[chars.length / 2] == 'A' ? 'B' : 'A';
        fails(Status.Code.ABORTED, () -> controller.listVolumes(ListVolumesRequest.newBuilder().setStartingToken(new String(chars)).build()));
        // a volumes token is no snapshots token
        fails(Status.Code.ABORTED, () -> controller.listSnapshots(ListSnapshotsRequest.newBuilder().setStartingToken(token).build()));
    }

    @Test
    void snapshotsAreRoutedAndListedByTheirNode() {
        Volume v = createOn("snapped", "node-c");
        Snapshot s = controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("snap-of-c")
                .setSourceVolumeId(v.getVolumeId()).build()).getSnapshot();
        assertTrue(s.getSnapshotId().endsWith("-node-c"), s.getSnapshotId());
        var bySource = controller.listSnapshots(ListSnapshotsRequest.newBuilder().setSourceVolumeId(v.getVolumeId()).build());
        assertEquals(List.of(s.getSnapshotId()), bySource.getEntriesList().stream().map(e -> e.getSnapshot().getSnapshotId()).toList());
        var all = controller.listSnapshots(ListSnapshotsRequest.getDefaultInstance());
        assertTrue(all.getEntriesList().stream().anyMatch(e -> e.getSnapshot().getSnapshotId().equals(s.getSnapshotId())));
        // restore on its node works; on another node is refused naming both
        Volume restored = controller.createVolume(volume("restored-on-c").setVolumeContentSource(VolumeContentSource.newBuilder()
                .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(s.getSnapshotId()))).build()).getVolume();
        assertTrue(restored.getVolumeId().endsWith("-node-c"), restored.getVolumeId());
        var e = fails(Status.Code.FAILED_PRECONDITION, () -> controller.createVolume(volume("restored-on-a")
                .setVolumeContentSource(VolumeContentSource.newBuilder()
                        .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(s.getSnapshotId())))
                .setAccessibilityRequirements(TopologyRequirement.newBuilder().addRequisite(on("node-a"))).build()));
        String message = e.getStatus().getDescription();
        assertTrue(message.contains("node-c") && message.contains("node-a"), message);
    }

    @Test
    void groupSnapshotsAcrossNodesAreOneGroupSnapshotWithPartsOnEachNode() {
        Volume a = createOn("group-a", "node-a");
        Volume b = createOn("group-b", "node-b");
        Volume a2 = createOn("group-a2", "node-a");
        var group = GroupControllerGrpc.newBlockingStub(cluster.controllerChannel());
        var request = CreateVolumeGroupSnapshotRequest.newBuilder().setName("across")
                .addSourceVolumeIds(a.getVolumeId()).addSourceVolumeIds(b.getVolumeId()).addSourceVolumeIds(a2.getVolumeId()).build();
        VolumeGroupSnapshot made = group.createVolumeGroupSnapshot(request).getGroupSnapshot();
        assertTrue(made.getGroupSnapshotId().endsWith("-_cluster"), made.getGroupSnapshotId());
        assertTrue(made.getReadyToUse());
        assertEquals(List.of(a.getVolumeId(), b.getVolumeId(), a2.getVolumeId()),
                made.getSnapshotsList().stream().map(Snapshot::getSourceVolumeId).toList(), "members in source order");
        for (Snapshot member : made.getSnapshotsList()) {
            assertEquals(made.getGroupSnapshotId(), member.getGroupSnapshotId());
            String node = member.getSourceVolumeId().endsWith("-node-b") ? "node-b" : "node-a";
            assertTrue(member.getSnapshotId().endsWith("-" + node), "a member snapshot lives on its volume's node: " + member);
            // listed with the cluster-wide group id, and routed by its own id
            Snapshot listed = controller.listSnapshots(ListSnapshotsRequest.newBuilder().setSnapshotId(member.getSnapshotId()).build())
                    .getEntries(0).getSnapshot();
            assertEquals(made.getGroupSnapshotId(), listed.getGroupSnapshotId());
        }
        List<String> memberIds = made.getSnapshotsList().stream().map(Snapshot::getSnapshotId).toList();

        // a retry answers the same group snapshot; the name with other volumes is ALREADY_EXISTS
        assertEquals(made.getGroupSnapshotId(), group.createVolumeGroupSnapshot(request).getGroupSnapshot().getGroupSnapshotId());
        fails(Status.Code.ALREADY_EXISTS, () -> group.createVolumeGroupSnapshot(request.toBuilder().clearSourceVolumeIds().addSourceVolumeIds(a.getVolumeId()).addSourceVolumeIds(b.getVolumeId()).build()));

        var got = group.getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest.newBuilder()
                .setGroupSnapshotId(made.getGroupSnapshotId()).addAllSnapshotIds(memberIds).build()).getGroupSnapshot();
        assertEquals(new java.util.HashSet<>(memberIds),
                new java.util.HashSet<>(got.getSnapshotsList().stream().map(Snapshot::getSnapshotId).toList()));
        fails(Status.Code.INVALID_ARGUMENT, () -> group.getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest.newBuilder()
                .setGroupSnapshotId(made.getGroupSnapshotId()).addSnapshotIds(memberIds.getFirst()).build()));
        fails(Status.Code.INVALID_ARGUMENT, () -> group.deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder()
                .setGroupSnapshotId(made.getGroupSnapshotId()).addSnapshotIds(memberIds.getFirst()).build()));

        // a member restores on its own node
        Volume restored = controller.createVolume(volume("from-across").setVolumeContentSource(VolumeContentSource.newBuilder()
                .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(made.getSnapshots(1).getSnapshotId()))).build()).getVolume();
        assertTrue(restored.getVolumeId().endsWith("-node-b"), restored.getVolumeId());
        controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(restored.getVolumeId()).build());

        group.deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder()
                .setGroupSnapshotId(made.getGroupSnapshotId()).addAllSnapshotIds(memberIds).build());
        fails(Status.Code.NOT_FOUND, () -> group.getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest.newBuilder()
                .setGroupSnapshotId(made.getGroupSnapshotId()).build()));
        for (String id : memberIds) {
            assertEquals(0, controller.listSnapshots(ListSnapshotsRequest.newBuilder().setSnapshotId(id).build()).getEntriesCount());
        }
        group.deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(made.getGroupSnapshotId()).build());

        // members all on one node: that node's own group snapshot
        var onA = group.createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder()
                .setName("on-a").addSourceVolumeIds(a.getVolumeId()).addSourceVolumeIds(a2.getVolumeId()).build()).getGroupSnapshot();
        assertTrue(onA.getGroupSnapshotId().endsWith("-node-a"), onA.getGroupSnapshotId());
        group.deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(onA.getGroupSnapshotId()).build());
        for (Volume v : List.of(a, b, a2)) controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).build());
    }

    @Test
    void volumeGroupsLiveOnTheirMembersNode() {
        Volume c = createOn("vg-member", "node-c");
        var groups = io.csi4j.proto.addons.volumegroup.ControllerGrpc.newBlockingStub(cluster.controllerAddonsChannel());
        var g = groups.createVolumeGroup(io.csi4j.proto.addons.volumegroup.CreateVolumeGroupRequest.newBuilder()
                .setName("vg-on-c").addVolumeIds(c.getVolumeId()).build()).getVolumeGroup();
        assertTrue(g.getVolumeGroupId().endsWith("-node-c"), g.getVolumeGroupId());
        var listed = groups.listVolumeGroups(io.csi4j.proto.addons.volumegroup.ListVolumeGroupsRequest.getDefaultInstance());
        assertTrue(listed.getEntriesList().stream().anyMatch(e -> e.getVolumeGroup().getVolumeGroupId().equals(g.getVolumeGroupId())));
    }

    @Test
    void capacityOfOneNodeOrOfAll() {
        long sum = 0;
        for (String node : NODES) {
            long one = controller.getCapacity(GetCapacityRequest.newBuilder().setAccessibleTopology(on(node)).build()).getAvailableCapacity();
            assertTrue(one > 0, node);
            sum += one;
        }
        long all = controller.getCapacity(GetCapacityRequest.getDefaultInstance()).getAvailableCapacity();
        // the three pools share this machine's disk: the sum is three times (about) one node's
        assertTrue(Math.abs(all - sum) < sum / 10, "sum " + sum + " vs " + all);
        assertEquals(0, controller.getCapacity(GetCapacityRequest.newBuilder().setAccessibleTopology(on("node-z")).build()).getAvailableCapacity());
    }

    @Test
    void idsOfUnknownNodesAreNotFound() {
        var e = fails(Status.Code.NOT_FOUND, () -> controller.controllerGetVolume(ControllerGetVolumeRequest.newBuilder()
                .setVolumeId("vol-abcdefghijklmnop-node-z").build()));
        assertTrue(e.getStatus().getDescription().contains("node-z"), e.getStatus().getDescription());
        fails(Status.Code.NOT_FOUND, () -> controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId("vol-abcdefghijklmnop-node-z").build()));
        fails(Status.Code.NOT_FOUND, () -> controller.getSnapshot(GetSnapshotRequest.newBuilder().setSnapshotId("snap-abcdefghijklmnop-node-z").build()));
        // an id that is not ours at all: answered as a single plugin would (NOT_FOUND, OK for a delete)
        fails(Status.Code.NOT_FOUND, () -> controller.controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId("no-such-volume").build()));
        controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId("no-such-volume").build());
        assertEquals(0, controller.listSnapshots(ListSnapshotsRequest.newBuilder().setSnapshotId("snap-abcdefghijklmnop-node-z").build()).getEntriesCount());
    }

    @Test
    void clientCertificatesFromAnotherCaAreRefused() throws Exception {
        var rogue = TestCertificates.authority(tmp.resolve("rogue"), "rogue");
        var rogueClient = rogue.issue("intruder");
        // trusts the agents' CA (so the server is accepted) but presents a certificate of another CA
        var mixed = new io.csi4j.sdk.server.MutualTls(rogueClient.certificate(), rogueClient.privateKey(), cluster.ca.caFile);
        var identity = IdentityGrpc.newBlockingStub(cluster.agentChannel("node-a", mixed)).withDeadlineAfter(10, TimeUnit.SECONDS);
        fails(Status.Code.UNAVAILABLE, () -> identity.getPluginInfo(GetPluginInfoRequest.getDefaultInstance()));
        // the controller's own certificate is accepted
        var ok = IdentityGrpc.newBlockingStub(cluster.agentChannel("node-a", cluster.controllerTls)).withDeadlineAfter(10, TimeUnit.SECONDS);
        assertEquals("node-a", ok.getPluginInfo(GetPluginInfoRequest.getDefaultInstance()).getManifestMap().get("node"));
        // plaintext is no way in either
        var plain = io.grpc.netty.NettyChannelBuilder.forAddress("127.0.0.1", cluster.nodes.get("node-a").agent().port())
                .usePlaintext().build();
        try {
            fails(Status.Code.UNAVAILABLE, () -> IdentityGrpc.newBlockingStub(plain).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .getPluginInfo(GetPluginInfoRequest.getDefaultInstance()));
        } finally {
            plain.shutdownNow();
        }
    }
}
