package io.csi4j.driver.addons;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig.GroupDeletePolicy;
import io.csi4j.driver.addons.Plugin.Setup;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.group.VolumeGroups;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.State;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.addons.identity.Capability;
import io.csi4j.proto.addons.identity.GetCapabilitiesRequest;
import io.csi4j.proto.addons.identity.GetIdentityRequest;
import io.csi4j.proto.addons.identity.ProbeRequest;
import io.csi4j.proto.addons.volumegroup.ControllerGetVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.CreateVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.DeleteVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.ListVolumeGroupsRequest;
import io.csi4j.proto.addons.volumegroup.ListVolumeGroupsResponse;
import io.csi4j.proto.addons.volumegroup.ModifyVolumeGroupMembershipRequest;
import io.csi4j.proto.addons.volumegroup.VolumeGroup;
import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.CreateVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.GetPluginInfoRequest;
import io.csi4j.proto.csi.GetVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.ListVolumesRequest;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.proto.csi.Snapshot;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeGroupSnapshot;
import io.csi4j.sdk.interceptor.CallLogInterceptor;
import io.grpc.Status.Code;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The CSI-Addons volume group service end to end: a real plugin on a temp data directory, clients on its
 * CSI and CSI-Addons sockets, for both engines and both delete policies. Every error row of the seed's
 * tables is asked for, and what a call answers is checked against what the catalog and the pool then hold.
 */
@ParameterizedClass(name = "{0} {1}")
@MethodSource("setups")
class VolumeGroupEndToEndTest {
    static final int MAX_MEMBERS = 4;

    static Stream<Arguments> setups() {
        return Stream.of(
                Arguments.of(Setup.IMAGE_XFS, GroupDeletePolicy.DELETE_VOLUMES),
                Arguments.of(Setup.IMAGE_XFS, GroupDeletePolicy.RETAIN_VOLUMES),
                Arguments.of(Setup.DIR, GroupDeletePolicy.DELETE_VOLUMES),
                Arguments.of(Setup.DIR, GroupDeletePolicy.RETAIN_VOLUMES));
    }

    @Parameter(0) Setup setup;
    @Parameter(1) GroupDeletePolicy policy;
    @TempDir Path dir;
    Plugin plugin;

    @BeforeEach
    void start() {
        setup.requireMachine();
        plugin = Plugin.start(Plugin.config(dir.resolve("data"), "node-a", setup, policy, MAX_MEMBERS));
    }

    @AfterEach
    void stop() {
        if (plugin != null) plugin.close();
    }

    // ---- identity ----

    @Test
    void identityMatchesTheCsiIdentityAndCapabilitiesFollowTheConfiguration() {
        var csi = plugin.identity().getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
        var addons = plugin.addonsIdentity().getIdentity(GetIdentityRequest.getDefaultInstance());
        assertEquals("local.csi4j.io", addons.getName());
        assertEquals(csi.getName(), addons.getName());
        assertEquals(csi.getVendorVersion(), addons.getVendorVersion());
        assertEquals(csi.getManifestMap(), addons.getManifestMap());
        assertTrue(plugin.addonsIdentity().probe(ProbeRequest.getDefaultInstance()).getReady().getValue());

        var caps = plugin.addonsIdentity().getCapabilities(GetCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList();
        Set<Capability.Service.Type> services = new HashSet<>();
        Set<Capability.VolumeGroup.Type> group = new HashSet<>();
        Set<Capability.ReclaimSpace.Type> reclaim = new HashSet<>();
        for (Capability c : caps) {
            switch (c.getTypeCase()) {
                case SERVICE -> services.add(c.getService().getType());
                case VOLUME_GROUP -> group.add(c.getVolumeGroup().getType());
                case RECLAIM_SPACE -> reclaim.add(c.getReclaimSpace().getType());
                default -> throw new AssertionError("unexpected capability " + c);
            }
        }
        // the image engine reclaims space, online (node) and offline (controller); this plugin serves both
        boolean image = setup.engine == EngineKind.IMAGE;
        assertEquals(image ? Set.of(Capability.Service.Type.CONTROLLER_SERVICE, Capability.Service.Type.NODE_SERVICE)
                : Set.of(Capability.Service.Type.CONTROLLER_SERVICE), services);
        assertEquals(image ? Set.of(Capability.ReclaimSpace.Type.ONLINE, Capability.ReclaimSpace.Type.OFFLINE) : Set.of(), reclaim);
        var expected = new HashSet<>(Set.of(Capability.VolumeGroup.Type.VOLUME_GROUP,
                Capability.VolumeGroup.Type.MODIFY_VOLUME_GROUP, Capability.VolumeGroup.Type.GET_VOLUME_GROUP,
                Capability.VolumeGroup.Type.LIST_VOLUME_GROUPS, Capability.VolumeGroup.Type.LIMIT_VOLUME_TO_ONE_VOLUME_GROUP));
        if (policy == GroupDeletePolicy.RETAIN_VOLUMES) expected.add(Capability.VolumeGroup.Type.DO_NOT_ALLOW_VG_TO_DELETE_VOLUMES);
        assertEquals(expected, group);
    }

    // ---- CreateVolumeGroup ----

    @Test
    void createIsIdempotentByNameAndRefusesIncompatibleRepeats() {
        String v1 = plugin.createVolume("v1").getVolumeId();
        String v2 = plugin.createVolume("v2").getVolumeId();
        var request = CreateVolumeGroupRequest.newBuilder().setName("g")
                .putParameters("csi.storage.k8s.io/pvc/namespace", "ns").addVolumeIds(v1).addVolumeIds(v2).build();
        VolumeGroup first = plugin.groups().createVolumeGroup(request).getVolumeGroup();
        assertTrue(ObjectId.parse(ObjectId.Kind.VOLUME_GROUP, first.getVolumeGroupId()).isPresent(), first.getVolumeGroupId());
        assertEquals(Set.of(v1, v2), ids(first));
        assertEquals("g", first.getVolumeGroupContextMap().get(VolumeGroups.CONTEXT_NAME));

        // the same request, and the same volumes in another order and with a duplicate: the same group
        assertEquals(first, plugin.groups().createVolumeGroup(request).getVolumeGroup());
        assertEquals(first, plugin.groups().createVolumeGroup(request.toBuilder().clearVolumeIds()
                .addVolumeIds(v2).addVolumeIds(v1).addVolumeIds(v2).build()).getVolumeGroup());

        String other = code(Code.ALREADY_EXISTS, () -> plugin.groups().createVolumeGroup(
                request.toBuilder().putParameters("csi.storage.k8s.io/pvc/namespace", "other").build()));
        assertTrue(other.contains(first.getVolumeGroupId()), other);
        code(Code.ALREADY_EXISTS, () -> plugin.groups().createVolumeGroup(request.toBuilder().clearVolumeIds().addVolumeIds(v1).build()));
        code(Code.ALREADY_EXISTS, () -> plugin.groups().createVolumeGroup(request.toBuilder().clearVolumeIds().build()));
        assertEquals(1, plugin.driver().catalog().volumeGroups().count());
        assertEquals(List.of(v1, v2).stream().sorted().toList(),
                plugin.driver().catalog().volumeGroups().members(first.getVolumeGroupId()));

        // an empty group is a group too
        VolumeGroup empty = plugin.groups().createVolumeGroup(CreateVolumeGroupRequest.newBuilder().setName("empty").build())
                .getVolumeGroup();
        assertEquals(0, empty.getVolumesCount());
        assertNotEquals(first.getVolumeGroupId(), empty.getVolumeGroupId());
    }

    @Test
    void createAnswersEveryErrorRow() throws Exception {
        String v1 = plugin.createVolume("v1").getVolumeId();
        String v2 = plugin.createVolume("v2").getVolumeId();
        code(Code.INVALID_ARGUMENT, () -> plugin.groups().createVolumeGroup(CreateVolumeGroupRequest.getDefaultInstance()));
        String unknown = code(Code.INVALID_ARGUMENT, () -> plugin.groups().createVolumeGroup(
                CreateVolumeGroupRequest.newBuilder().setName("g").putParameters("replication", "async").build()));
        assertTrue(unknown.contains("replication"), unknown);

        String missing = ObjectId.generate(ObjectId.Kind.VOLUME, "node-a").toString();
        String notFound = code(Code.NOT_FOUND, () -> plugin.groups().createVolumeGroup(
                CreateVolumeGroupRequest.newBuilder().setName("g").addVolumeIds(v1).addVolumeIds(missing).build()));
        assertTrue(notFound.contains(missing), notFound);
        code(Code.NOT_FOUND, () -> plugin.groups().createVolumeGroup(
                CreateVolumeGroupRequest.newBuilder().setName("g").addVolumeIds("../../etc/passwd").build()));

        // LIMIT_VOLUME_TO_ONE_VOLUME_GROUP
        String g1 = plugin.groups().createVolumeGroup(CreateVolumeGroupRequest.newBuilder().setName("g1").addVolumeIds(v1).build())
                .getVolumeGroup().getVolumeGroupId();
        String taken = code(Code.FAILED_PRECONDITION, () -> plugin.groups().createVolumeGroup(
                CreateVolumeGroupRequest.newBuilder().setName("g2").addVolumeIds(v2).addVolumeIds(v1).build()));
        assertTrue(taken.contains("cannot be grouped together") && taken.contains(g1), taken);

        // a volume of another node: a real one, from a second plugin
        try (Plugin nodeB = Plugin.start(Plugin.config(dir.resolve("node-b"), "node-b", Setup.DIR, policy, MAX_MEMBERS))) {
            String foreign = nodeB.createVolume("vb").getVolumeId();
            String nodes = code(Code.FAILED_PRECONDITION, () -> plugin.groups().createVolumeGroup(
                    CreateVolumeGroupRequest.newBuilder().setName("g3").addVolumeIds(v2).addVolumeIds(foreign).build()));
            assertTrue(nodes.contains("cannot be grouped together") && nodes.contains("node-a") && nodes.contains("node-b")
                    && nodes.contains(foreign), nodes);
        }

        // more members than configured
        List<String> many = new ArrayList<>();
        for (int i = 0; i <= MAX_MEMBERS; i++) many.add(plugin.createVolume("m" + i).getVolumeId());
        code(Code.RESOURCE_EXHAUSTED, () -> plugin.groups().createVolumeGroup(
                CreateVolumeGroupRequest.newBuilder().setName("big").addAllVolumeIds(many).build()));

        // nothing of the refused calls was kept
        assertEquals(1, plugin.driver().catalog().volumeGroups().count());
        assertEquals(List.of(), plugin.driver().catalog().volumeGroups().groupsOf(v2));
    }

    // ---- ModifyVolumeGroupMembership ----

    @Test
    void modifyMakesTheMembersExactlyTheListedVolumes() {
        String v1 = plugin.createVolume("v1").getVolumeId();
        String v2 = plugin.createVolume("v2").getVolumeId();
        String v3 = plugin.createVolume("v3").getVolumeId();
        String g = group("g", v1, v2);

        assertEquals(Set.of(v2, v3), ids(modify(g, v2, v3)));
        assertEquals(Set.of(v2, v3), ids(modify(g, v3, v2)));                 // idempotent
        assertEquals(Set.of(v2, v3), ids(get(g)));
        assertEquals(List.of(), plugin.driver().catalog().volumeGroups().groupsOf(v1));
        assertEquals(Set.of(), ids(modify(g)));                                // empty list empties the group
        assertEquals(0, get(g).getVolumesCount());
        assertEquals(Set.of(v1), ids(modify(g, v1)));
        var withParameters = ModifyVolumeGroupMembershipRequest.newBuilder().setVolumeGroupId(g).addVolumeIds(v1)
                .putParameters("csi.storage.k8s.io/pvc/name", "x").build();
        assertEquals(Set.of(v1), ids(plugin.groups().modifyVolumeGroupMembership(withParameters).getVolumeGroup()));
    }

    @Test
    void modifyAnswersEveryErrorRowAndChangesNothingWhenRefused() throws Exception {
        String v1 = plugin.createVolume("v1").getVolumeId();
        String v2 = plugin.createVolume("v2").getVolumeId();
        String g = group("g", v1);
        String other = group("other", v2);

        String missingGroup = ObjectId.generate(ObjectId.Kind.VOLUME_GROUP, "node-a").toString();
        code(Code.NOT_FOUND, () -> modify(missingGroup, v1));
        code(Code.NOT_FOUND, () -> modify("not-a-group", v1));
        code(Code.INVALID_ARGUMENT, () -> plugin.groups().modifyVolumeGroupMembership(
                ModifyVolumeGroupMembershipRequest.newBuilder().addVolumeIds(v1).build()));   // REQUIRED id
        String missingVolume = ObjectId.generate(ObjectId.Kind.VOLUME, "node-a").toString();
        String notFound = code(Code.NOT_FOUND, () -> modify(g, missingVolume));
        assertTrue(notFound.contains(missingVolume), notFound);
        String params = code(Code.INVALID_ARGUMENT, () -> plugin.groups().modifyVolumeGroupMembership(
                ModifyVolumeGroupMembershipRequest.newBuilder().setVolumeGroupId(g).addVolumeIds(v1)
                        .putParameters("mirroring", "on").build()));
        assertTrue(params.contains("mirroring"), params);
        String taken = code(Code.FAILED_PRECONDITION, () -> modify(g, v1, v2));
        assertTrue(taken.contains(other), taken);

        List<String> more = new ArrayList<>(List.of(v1));
        for (int i = 0; i < MAX_MEMBERS; i++) more.add(plugin.createVolume("m" + i).getVolumeId());
        code(Code.RESOURCE_EXHAUSTED, () -> modify(g, more.toArray(String[]::new)));
        assertEquals(MAX_MEMBERS, ids(modify(g, more.subList(0, MAX_MEMBERS).toArray(String[]::new))).size());

        try (Plugin nodeB = Plugin.start(Plugin.config(dir.resolve("node-b"), "node-b", Setup.DIR, policy, MAX_MEMBERS))) {
            String foreign = nodeB.createVolume("vb").getVolumeId();
            String incompatible = code(Code.INVALID_ARGUMENT, () -> modify(g, v1, foreign));
            assertTrue(incompatible.contains("node-b") && incompatible.contains("node-a"), incompatible);
        }
        assertEquals(new TreeSet<>(more.subList(0, MAX_MEMBERS)), ids(get(g)));
        assertEquals(Set.of(v2), ids(get(other)));
    }

    // ---- ControllerGetVolumeGroup / ListVolumeGroups ----

    @Test
    void getShowsMembersAsFullCsiVolumes() {
        String v1 = plugin.createVolume("v1").getVolumeId();
        var snapshot = plugin.groupController().createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder()
                .setName("s").addSourceVolumeIds(v1).build()).getGroupSnapshot();
        String restored = plugin.restoreVolume("restored", snapshot.getSnapshots(0).getSnapshotId()).getVolumeId();
        String g = group("g", v1, restored);

        VolumeGroup got = get(g);
        assertEquals(2, got.getVolumesCount());
        for (Volume member : got.getVolumesList()) {
            Volume csi = plugin.getVolume(member.getVolumeId());
            assertEquals(csi, member);                       // capacity, id, context, content source, topology
            assertTrue(member.getCapacityBytes() > 0);
            assertEquals("node-a", member.getAccessibleTopology(0).getSegmentsMap().get("topology.csi4j.io/node"));
        }
        Volume fromSnapshot = got.getVolumesList().stream().filter(m -> m.getVolumeId().equals(restored)).findFirst().orElseThrow();
        assertEquals(snapshot.getSnapshots(0).getSnapshotId(), fromSnapshot.getContentSource().getSnapshot().getSnapshotId());

        code(Code.NOT_FOUND, () -> get(ObjectId.generate(ObjectId.Kind.VOLUME_GROUP, "node-a").toString()));
        code(Code.NOT_FOUND, () -> get("vg-nonsense"));
        code(Code.INVALID_ARGUMENT, () -> get(""));
        plugin.groupController().deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder()
                .setGroupSnapshotId(snapshot.getGroupSnapshotId())
                .addAllSnapshotIds(snapshot.getSnapshotsList().stream().map(Snapshot::getSnapshotId).toList()).build());
    }

    @Test
    void listPagesWithOpaqueTokens() {
        Set<String> created = new TreeSet<>();
        for (int i = 0; i < 5; i++) created.add(group("g" + i, plugin.createVolume("v" + i).getVolumeId()));
        Set<String> seen = new TreeSet<>();
        String token = "";
        int pages = 0;
        do {
            ListVolumeGroupsResponse page = plugin.groups().listVolumeGroups(ListVolumeGroupsRequest.newBuilder()
                    .setMaxEntries(2).setStartingToken(token).build());
            assertTrue(page.getEntriesCount() <= 2);
            for (var e : page.getEntriesList()) {
                assertTrue(seen.add(e.getVolumeGroup().getVolumeGroupId()), "listed twice");
                assertEquals(1, e.getVolumeGroup().getVolumesCount());
            }
            token = page.getNextToken();
            pages++;
        } while (!token.isEmpty());
        assertEquals(created, seen);
        assertEquals(3, pages);
        assertEquals(5, plugin.groups().listVolumeGroups(ListVolumeGroupsRequest.getDefaultInstance()).getEntriesCount());

        code(Code.ABORTED, () -> plugin.groups().listVolumeGroups(ListVolumeGroupsRequest.newBuilder().setStartingToken("garbage").build()));
        String volumesToken = plugin.controller().listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(1).build()).getNextToken();
        assertFalse(volumesToken.isEmpty());
        code(Code.ABORTED, () -> plugin.groups().listVolumeGroups(ListVolumeGroupsRequest.newBuilder().setStartingToken(volumesToken).build()));
        code(Code.INVALID_ARGUMENT, () -> plugin.groups().listVolumeGroups(ListVolumeGroupsRequest.newBuilder().setMaxEntries(-1).build()));
    }

    // ---- DeleteVolume of a member, CreateVolume into a group ----

    @Test
    void aGroupedVolumeIsDeletedOnlyAfterLeavingItsGroup() {
        String v1 = plugin.createVolume("v1").getVolumeId();
        String g = group("g", v1);
        String message = code(Code.FAILED_PRECONDITION, () -> plugin.controller().deleteVolume(
                DeleteVolumeRequest.newBuilder().setVolumeId(v1).build()));
        assertTrue(message.contains("remove it from the group first") && message.contains(g), message);
        assertTrue(plugin.driver().engine().volumeArtifacts().contains(v1));
        modify(g);
        plugin.controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v1).build());
        assertFalse(plugin.driver().engine().volumeArtifacts().contains(v1));
    }

    @Test
    void createVolumeWithTheGroupParameterJoinsTheGroup() {
        String g = group("g");
        Volume v = plugin.controller().createVolume(CreateVolumeRequest.newBuilder().setName("in-group")
                .addVolumeCapabilities(Plugin.WRITER).putParameters("csi4j.io/volume-group", g).build()).getVolume();
        assertEquals(Set.of(v.getVolumeId()), ids(get(g)));
        code(Code.FAILED_PRECONDITION, () -> group("second", v.getVolumeId()));
    }

    // ---- DeleteVolumeGroup ----

    @Test
    void deleteFollowsThePolicy() {
        String v1 = plugin.createVolume("v1").getVolumeId();
        String v2 = plugin.createVolume("v2").getVolumeId();
        String g = group("g", v1, v2);
        switch (policy) {
            case DELETE_VOLUMES -> {
                delete(g);
                code(Code.NOT_FOUND, () -> get(g));
                for (String v : List.of(v1, v2)) {
                    code(Code.NOT_FOUND, () -> plugin.getVolume(v));
                    assertFalse(plugin.driver().engine().volumeArtifacts().contains(v), v);
                }
                assertEquals(0, plugin.driver().catalog().volumes().count());
            }
            case RETAIN_VOLUMES -> {
                String message = code(Code.FAILED_PRECONDITION, () -> delete(g));
                assertTrue(message.contains(v1) && message.contains(v2), message);
                assertEquals(Set.of(v1, v2), ids(get(g)));
                modify(g);                                  // the sidecar's delete flow: empty it, then delete
                delete(g);
                code(Code.NOT_FOUND, () -> get(g));
                for (String v : List.of(v1, v2)) assertEquals(v, plugin.getVolume(v).getVolumeId());
            }
        }
        assertEquals(0, plugin.driver().catalog().volumeGroups().count());
        delete(g);                                              // gone: OK
        delete(ObjectId.generate(ObjectId.Kind.VOLUME_GROUP, "node-a").toString());
        delete("no such group");
        code(Code.FAILED_PRECONDITION, () -> delete(ObjectId.generate(ObjectId.Kind.VOLUME_GROUP, "node-b").toString()));
    }

    @Test
    void deleteIsRefusedWhileAMemberIsPublishedOrBeingSnapshotted() {
        String v1 = plugin.createVolume("v1").getVolumeId();
        String v2 = plugin.createVolume("v2").getVolumeId();
        String g = group("g", v1, v2);
        plugin.controller().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(v2)
                .setNodeId("node-a").setVolumeCapability(Plugin.WRITER).build());
        String published = code(Code.FAILED_PRECONDITION, () -> delete(g));
        if (policy == GroupDeletePolicy.DELETE_VOLUMES) assertTrue(published.contains("published") && published.contains(v2), published);
        plugin.controller().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(v2)
                .setNodeId("node-a").build());

        // a snapshot of a member being cut (its row is CREATING until the cut commits)
        var now = Instant.now();
        String cutting = ObjectId.generate(ObjectId.Kind.SNAPSHOT, "node-a").toString();
        plugin.driver().catalog().snapshots().insert(new SnapshotRecord(cutting, "cutting", v1, 0, null, Map.of(),
                State.CREATING, now, now));
        String snapshotting = code(Code.FAILED_PRECONDITION, () -> delete(g));
        if (policy == GroupDeletePolicy.DELETE_VOLUMES) assertTrue(snapshotting.contains("being cut"), snapshotting);
        plugin.driver().catalog().snapshots().delete(cutting);

        assertEquals(Set.of(v1, v2), ids(get(g)));              // refusals changed nothing
        for (String v : List.of(v1, v2)) assertEquals(State.READY, plugin.driver().catalog().volumes().byId(v).orElseThrow().state());
        if (policy == GroupDeletePolicy.RETAIN_VOLUMES) modify(g);
        delete(g);
        code(Code.NOT_FOUND, () -> get(g));
    }

    @Test
    void deleteIsRefusedWhileAMemberIsMountedOnTheNode() throws IOException {
        Privileged.requireRoot();
        String v1 = plugin.createVolume("v1").getVolumeId();
        String g = group("g", v1);
        if (policy == GroupDeletePolicy.RETAIN_VOLUMES) {
            code(Code.FAILED_PRECONDITION, () -> delete(g));
            return;                                             // retained members are never at risk
        }
        Path staging = Files.createDirectories(dir.resolve("staging"));
        Path target = dir.resolve("target");
        var node = plugin.node();
        node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(v1).setStagingTargetPath(staging.toString())
                .setVolumeCapability(Plugin.WRITER).build());
        try {
            node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(v1).setStagingTargetPath(staging.toString())
                    .setTargetPath(target.toString()).setVolumeCapability(Plugin.WRITER).build());
            try {
                String mounted = code(Code.FAILED_PRECONDITION, () -> delete(g));
                assertTrue(mounted.contains("published on this node") && mounted.contains(v1), mounted);
                assertEquals(State.READY, plugin.driver().catalog().volumes().byId(v1).orElseThrow().state());
                assertEquals(Set.of(v1), ids(get(g)));
            } finally {
                node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(v1)
                        .setTargetPath(target.toString()).build());
            }
        } finally {
            node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(v1)
                    .setStagingTargetPath(staging.toString()).build());
        }
        delete(g);
        assertFalse(plugin.driver().engine().volumeArtifacts().contains(v1));
    }

    // ---- group snapshots of a group's members ----

    @Test
    void groupSnapshotOfTheMembersRestoreOneThenDeleteTheGroup() {
        String v1 = plugin.createVolume("v1").getVolumeId();
        String v2 = plugin.createVolume("v2").getVolumeId();
        String g = group("g", v1, v2);
        boolean mounts = Privileged.isRoot();                  // content through real mounts when we may mount
        if (mounts) {
            writeFile(v1, "before the snapshot");
            writeFile(v2, "v2 before the snapshot");
        }
        List<String> members = get(g).getVolumesList().stream().map(Volume::getVolumeId).toList();
        VolumeGroupSnapshot snapshot = plugin.groupController().createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest
                .newBuilder().setName("g-snap").addAllSourceVolumeIds(members).build()).getGroupSnapshot();
        assertEquals(new TreeSet<>(members), new TreeSet<>(snapshot.getSnapshotsList().stream().map(Snapshot::getSourceVolumeId).toList()));
        assertTrue(snapshot.getReadyToUse());
        String ofV1 = snapshot.getSnapshotsList().stream().filter(s -> s.getSourceVolumeId().equals(v1)).findFirst()
                .orElseThrow().getSnapshotId();

        if (mounts) writeFile(v1, "after the snapshot");
        Volume restored = plugin.restoreVolume("v1-restored", ofV1);
        assertEquals(ofV1, restored.getContentSource().getSnapshot().getSnapshotId());
        if (mounts) {
            assertEquals("before the snapshot", readFile(restored.getVolumeId()));
            assertEquals("after the snapshot", readFile(v1));
        }

        if (policy == GroupDeletePolicy.RETAIN_VOLUMES) modify(g);
        delete(g);
        code(Code.NOT_FOUND, () -> get(g));
        // the snapshots and the restored volume are independent of the group and its members
        assertEquals(snapshot, plugin.groupController().getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest.newBuilder()
                .setGroupSnapshotId(snapshot.getGroupSnapshotId())
                .addAllSnapshotIds(snapshot.getSnapshotsList().stream().map(Snapshot::getSnapshotId).toList()).build())
                .getGroupSnapshot());
        assertEquals(restored.getVolumeId(), plugin.getVolume(restored.getVolumeId()).getVolumeId());
        assertTrue(plugin.driver().engine().volumeArtifacts().contains(restored.getVolumeId()));
        assertEquals(policy == GroupDeletePolicy.RETAIN_VOLUMES, plugin.driver().engine().volumeArtifacts().contains(v1));
        plugin.groupController().deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder()
                .setGroupSnapshotId(snapshot.getGroupSnapshotId())
                .addAllSnapshotIds(snapshot.getSnapshotsList().stream().map(Snapshot::getSnapshotId).toList()).build());
    }

    // ---- concurrency ----

    @Test
    void parallelModifiesOfOneGroupAreCoalescedOrAbortedAndNeverLoseAnUpdate() throws Exception {
        List<String> pool = new ArrayList<>();
        for (int i = 0; i < 6; i++) pool.add(plugin.createVolume("v" + i).getVolumeId());
        String g = group("g");
        Random random = new Random(42);
        int ok = 0, aborted = 0;
        try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int round = 0; round < 10; round++) {
                List<Set<String>> asked = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    Set<String> subset = new TreeSet<>();
                    for (String v : pool) if (subset.size() < MAX_MEMBERS && random.nextBoolean()) subset.add(v);
                    asked.add(subset);
                }
                CountDownLatch go = new CountDownLatch(1);
                List<Future<Set<String>>> answers = new ArrayList<>();
                for (Set<String> subset : asked) {
                    answers.add(threads.submit(() -> {
                        go.await();
                        return ids(modify(g, subset.toArray(String[]::new)));
                    }));
                }
                go.countDown();
                List<Set<String>> applied = new ArrayList<>();
                for (int t = 0; t < answers.size(); t++) {
                    try {
                        Set<String> answer = answers.get(t).get();
                        assertEquals(asked.get(t), answer, "an OK Modify answers exactly the set it asked for");
                        applied.add(answer);
                        ok++;
                    } catch (ExecutionException e) {
                        assertEquals(Code.ABORTED, ((StatusRuntimeException) e.getCause()).getStatus().getCode(), e.toString());
                        aborted++;
                    }
                }
                assertFalse(applied.isEmpty(), "round " + round + ": no Modify got through");
                Set<String> now = ids(get(g));
                assertTrue(applied.contains(now), "members " + now + " are none of the applied sets " + applied);
                assertEquals(now, new TreeSet<>(plugin.driver().catalog().volumeGroups().members(g)));
            }
        }
        assertTrue(ok >= 10, "ok " + ok + " aborted " + aborted);

        // identical requests in flight together are coalesced: one runs, all get its answer
        var same = ModifyVolumeGroupMembershipRequest.newBuilder().setVolumeGroupId(g)
                .addAllVolumeIds(pool.subList(0, 2)).build();
        modify(g);
        try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<VolumeGroup>> answers = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                answers.add(threads.submit(() -> {
                    go.await();
                    return plugin.groups().modifyVolumeGroupMembership(same).getVolumeGroup();
                }));
            }
            go.countDown();
            for (var answer : answers) assertEquals(new TreeSet<>(pool.subList(0, 2)), ids(answer.get()));
        }
    }

    @Test
    void withoutTheGuardTheCatalogStillSerializesMembershipChanges() throws Exception {
        // straight to the domain, bypassing the in-flight guard: concurrent Modify and Create race for volumes
        List<String> pool = new ArrayList<>();
        for (int i = 0; i < 4; i++) pool.add(plugin.createVolume("v" + i).getVolumeId());
        VolumeGroups groups = plugin.driver().volumeGroups();
        String a = groups.create("a", Map.of(), List.of()).id();
        ConcurrentLinkedQueue<String> winners = new ConcurrentLinkedQueue<>();
        try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> all = new ArrayList<>();
            all.add(threads.submit(() -> {
                go.await();
                try {
                    groups.modify(a, pool, Map.of());
                    winners.add("modify");
                } catch (DomainException e) {
                    assertEquals(DomainException.Kind.PRECONDITION, e.kind(), e.getMessage());
                }
                return null;
            }));
            for (int t = 0; t < 4; t++) {
                String name = "b" + t;
                all.add(threads.submit(() -> {
                    go.await();
                    try {
                        groups.create(name, Map.of(), List.of(pool.get(name.charAt(1) - '0')));
                        winners.add(name);
                    } catch (DomainException e) {
                        assertEquals(DomainException.Kind.PRECONDITION, e.kind(), e.getMessage());
                    }
                    return null;
                }));
            }
            go.countDown();
            for (var f : all) f.get();
        }
        // either the Modify took all four volumes, or the Creates took theirs; never a volume in two groups
        for (String v : pool) assertTrue(plugin.driver().catalog().volumeGroups().groupsOf(v).size() <= 1, v);
        if (winners.contains("modify")) {
            assertEquals(List.of("modify"), List.copyOf(winners));
            assertEquals(new TreeSet<>(pool), new TreeSet<>(groups.get(a).memberIds()));
        } else {
            assertEquals(4, winners.size(), winners.toString());
            assertEquals(List.of(), groups.get(a).memberIds());
        }

        // unguarded parallel Modifies of one group: each answers the set it committed, the last one stays
        String c = groups.create("c", Map.of(), List.of()).id();
        pool.forEach(v -> plugin.driver().catalog().volumeGroups().groupsOf(v)
                .forEach(g -> groups.modify(g, List.of(), Map.of())));
        List<List<String>> asked = List.of(List.of(), pool.subList(0, 1), pool.subList(0, 2), pool.subList(1, 4),
                pool.subList(2, 4), pool, List.of(pool.get(3), pool.get(0)), pool.subList(1, 2));
        try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int round = 0; round < 20; round++) {
                CountDownLatch go = new CountDownLatch(1);
                List<Future<List<String>>> answers = new ArrayList<>();
                for (List<String> set : asked) {
                    answers.add(threads.submit(() -> {
                        go.await();
                        return groups.modify(c, set, Map.of()).memberIds();
                    }));
                }
                go.countDown();
                for (int t = 0; t < asked.size(); t++) {
                    assertEquals(new TreeSet<>(asked.get(t)), new TreeSet<>(answers.get(t).get()), "answer of Modify " + t);
                }
                Set<String> now = new TreeSet<>(groups.get(c).memberIds());
                assertTrue(asked.stream().map(TreeSet::new).anyMatch(now::equals), "members " + now + " were never asked for");
            }
        }
    }

    // ---- secrets, restart ----

    @Test
    void secretsOfEveryRequestAreRedactedInTheCallLog() {
        String secret = "vg-secret-" + System.nanoTime();
        Logger log = Logger.getLogger(CallLogInterceptor.LOGGER);
        List<String> lines = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override public void publish(LogRecord r) { lines.add(r.getMessage() == null ? "" : r.getMessage()); }
            @Override public void flush() {}
            @Override public void close() {}
        };
        Level before = log.getLevel();
        log.setLevel(Level.FINE);
        capture.setLevel(Level.ALL);
        log.addHandler(capture);
        try {
            String v1 = plugin.createVolume("v1").getVolumeId();
            String g = plugin.groups().createVolumeGroup(CreateVolumeGroupRequest.newBuilder().setName("g")
                    .putSecrets("key", secret).addVolumeIds(v1).build()).getVolumeGroup().getVolumeGroupId();
            plugin.groups().modifyVolumeGroupMembership(ModifyVolumeGroupMembershipRequest.newBuilder().setVolumeGroupId(g)
                    .putSecrets("key", secret).build());
            plugin.groups().controllerGetVolumeGroup(ControllerGetVolumeGroupRequest.newBuilder().setVolumeGroupId(g)
                    .putSecrets("key", secret).build());
            plugin.groups().listVolumeGroups(ListVolumeGroupsRequest.newBuilder().putSecrets("key", secret).build());
            plugin.groups().deleteVolumeGroup(DeleteVolumeGroupRequest.newBuilder().setVolumeGroupId(g)
                    .putSecrets("key", secret).build());
        } finally {
            log.removeHandler(capture);
            log.setLevel(before);
        }
        for (String rpc : List.of("CreateVolumeGroup", "ModifyVolumeGroupMembership", "ControllerGetVolumeGroup",
                "ListVolumeGroups", "DeleteVolumeGroup")) {
            assertTrue(lines.stream().anyMatch(l -> l.contains("volumegroup.Controller/" + rpc + " request") && l.contains("***")),
                    rpc + " request not logged redacted: " + lines);
        }
        assertTrue(lines.stream().noneMatch(l -> l.contains(secret)), "secret leaked: " + lines);
    }

    @Test
    void groupsSurviveARestart() {
        String v1 = plugin.createVolume("v1").getVolumeId();
        String g = group("g", v1);
        VolumeGroup before = get(g);
        plugin.restart();
        assertEquals(before, get(g));
        assertTrue(plugin.addonsIdentity().probe(ProbeRequest.getDefaultInstance()).getReady().getValue());
    }

    // ---- helpers ----

    /** Stages and publishes the volume, runs {@code body} on its mounted directory, unpublishes and unstages. */
    private <T> T mounted(String volumeId, Function<Path, T> body) {
        Path staging = dir.resolve("staging-" + volumeId);
        Path target = dir.resolve("target-" + volumeId);
        var node = plugin.node();
        try {
            Files.createDirectories(staging);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(volumeId).setStagingTargetPath(staging.toString())
                .setVolumeCapability(Plugin.WRITER).build());
        try {
            node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(volumeId)
                    .setStagingTargetPath(staging.toString()).setTargetPath(target.toString())
                    .setVolumeCapability(Plugin.WRITER).build());
            try {
                return body.apply(target);
            } finally {
                node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(volumeId)
                        .setTargetPath(target.toString()).build());
            }
        } finally {
            node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(volumeId)
                    .setStagingTargetPath(staging.toString()).build());
        }
    }

    private void writeFile(String volumeId, String text) {
        mounted(volumeId, root -> {
            try {
                return Files.writeString(root.resolve("data.txt"), text);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    private String readFile(String volumeId) {
        return mounted(volumeId, root -> {
            try {
                return Files.readString(root.resolve("data.txt"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    private String group(String name, String... volumeIds) {
        return plugin.groups().createVolumeGroup(CreateVolumeGroupRequest.newBuilder().setName(name)
                .addAllVolumeIds(List.of(volumeIds)).build()).getVolumeGroup().getVolumeGroupId();
    }

    private VolumeGroup modify(String groupId, String... volumeIds) {
        return plugin.groups().modifyVolumeGroupMembership(ModifyVolumeGroupMembershipRequest.newBuilder()
                .setVolumeGroupId(groupId).addAllVolumeIds(List.of(volumeIds)).build()).getVolumeGroup();
    }

    private VolumeGroup get(String groupId) {
        return plugin.groups().controllerGetVolumeGroup(ControllerGetVolumeGroupRequest.newBuilder()
                .setVolumeGroupId(groupId).build()).getVolumeGroup();
    }

    private void delete(String groupId) {
        plugin.groups().deleteVolumeGroup(DeleteVolumeGroupRequest.newBuilder().setVolumeGroupId(groupId).build());
    }

    private static Set<String> ids(VolumeGroup g) {
        return new TreeSet<>(g.getVolumesList().stream().map(Volume::getVolumeId).toList());
    }

    /** Runs the call, asserts it fails with {@code expected}, returns the status message. */
    static String code(Code expected, Executable call) {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call);
        assertEquals(expected, e.getStatus().getCode(), e.getStatus().toString());
        return e.getStatus().getDescription() == null ? "" : e.getStatus().getDescription();
    }
}
