package io.csi4j.driver.addons;

import static io.csi4j.driver.addons.VolumeGroupEndToEndTest.code;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig.GroupDeletePolicy;
import io.csi4j.driver.addons.Plugin.Setup;
import io.csi4j.proto.csi.CreateVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.testing.vgseed.ControllerGetVolumeGroupRequest;
import io.csi4j.proto.testing.vgseed.ControllerGrpc;
import io.csi4j.proto.testing.vgseed.CreateVolumeGroupRequest;
import io.csi4j.proto.testing.vgseed.DeleteVolumeGroupRequest;
import io.csi4j.proto.testing.vgseed.ListVolumeGroupsRequest;
import io.csi4j.proto.testing.vgseed.ListVolumeGroupsResponse;
import io.csi4j.proto.testing.vgseed.ModifyVolumeGroupMembershipRequest;
import io.csi4j.proto.testing.vgseed.VgVolume;
import io.csi4j.proto.testing.vgseed.VolumeGroup;
import io.csi4j.sdk.interceptor.CallLogInterceptor;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import io.grpc.Status.Code;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client built on the other VolumeGroup variant (seeds 000/003: {@code VgVolume}, {@code vg_csi_secret}, no
 * {@code volume_ids} in Create) drives the real plugin on its CSI-Addons socket. The .proto is the proto
 * module's test copy, compiled into this module's tests by driver/pom.xml. Same method paths, and VgVolume
 * must decode exactly what csi.v1.Volume encoded, field by field.
 */
class SeedVariantClientTest {
    @TempDir Path dir;
    Plugin plugin;
    ManagedChannel channel;

    @BeforeEach
    void start() {
        plugin = Plugin.start(Plugin.config(dir.resolve("data"), "node-a", Setup.IMAGE_PLAIN,
                GroupDeletePolicy.DELETE_VOLUMES, 8));
        channel = Channels.connect(Endpoint.parse("unix://" + plugin.dataDir.resolve("csi-addons.sock")));
    }

    @AfterEach
    void stop() {
        if (channel != null) channel.shutdownNow();
        if (plugin != null) plugin.close();
    }

    private ControllerGrpc.ControllerBlockingStub seed() {
        return ControllerGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    @Test
    void createModifyGetListDeleteFromTheSeedVariantClient() {
        String v1 = plugin.createVolume("v1").getVolumeId();
        var snapshot = plugin.groupController().createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder()
                .setName("s").addSourceVolumeIds(v1).build()).getGroupSnapshot();
        String v2 = plugin.restoreVolume("v2", snapshot.getSnapshots(0).getSnapshotId()).getVolumeId();

        // this variant cannot name volumes at creation: an empty group, then Modify
        var create = CreateVolumeGroupRequest.newBuilder().setName("seed-group")
                .putParameters("csi.storage.k8s.io/pvc/namespace", "ns").putSecrets("token", "seed-secret").build();
        VolumeGroup created = seed().createVolumeGroup(create).getVolumeGroup();
        String g = created.getVolumeGroupId();
        assertTrue(g.startsWith("vg-"), g);
        assertEquals(0, created.getVolumesCount());
        assertEquals(created, seed().createVolumeGroup(create).getVolumeGroup());       // idempotent by name
        code(Code.INVALID_ARGUMENT, () -> seed().createVolumeGroup(create.toBuilder().putParameters("x", "y").build()));

        VolumeGroup modified = seed().modifyVolumeGroupMembership(ModifyVolumeGroupMembershipRequest.newBuilder()
                .setVolumeGroupId(g).addVolumeIds(v1).addVolumeIds(v2).putSecrets("token", "seed-secret").build()).getVolumeGroup();
        assertMembersDecode(modified, Set.of(v1, v2));

        VolumeGroup got = seed().controllerGetVolumeGroup(ControllerGetVolumeGroupRequest.newBuilder().setVolumeGroupId(g).build())
                .getVolumeGroup();
        assertEquals(modified, got);
        VgVolume restored = got.getVolumesList().stream().filter(v -> v.getVolumeId().equals(v2)).findFirst().orElseThrow();
        assertEquals(snapshot.getSnapshots(0).getSnapshotId(), restored.getContentSource().getSnapshot().getSnapshotId());

        String other = seed().createVolumeGroup(CreateVolumeGroupRequest.newBuilder().setName("other").build())
                .getVolumeGroup().getVolumeGroupId();
        ListVolumeGroupsResponse first = seed().listVolumeGroups(ListVolumeGroupsRequest.newBuilder().setMaxEntries(1).build());
        assertEquals(1, first.getEntriesCount());
        assertFalse(first.getNextToken().isEmpty());
        ListVolumeGroupsResponse second = seed().listVolumeGroups(ListVolumeGroupsRequest.newBuilder().setMaxEntries(1)
                .setStartingToken(first.getNextToken()).build());
        assertEquals(Set.of(g, other), Set.of(first.getEntries(0).getVolumeGroup().getVolumeGroupId(),
                second.getEntries(0).getVolumeGroup().getVolumeGroupId()));
        assertEquals(got, first.getEntries(0).getVolumeGroup());
        code(Code.ABORTED, () -> seed().listVolumeGroups(ListVolumeGroupsRequest.newBuilder().setStartingToken("x").build()));

        // Modify to one member, then the seed semantics of Delete: the group and its volumes go
        assertMembersDecode(seed().modifyVolumeGroupMembership(ModifyVolumeGroupMembershipRequest.newBuilder()
                .setVolumeGroupId(g).addVolumeIds(v2).build()).getVolumeGroup(), Set.of(v2));
        seed().deleteVolumeGroup(DeleteVolumeGroupRequest.newBuilder().setVolumeGroupId(g).putSecrets("token", "seed-secret").build());
        code(Code.NOT_FOUND, () -> seed().controllerGetVolumeGroup(ControllerGetVolumeGroupRequest.newBuilder().setVolumeGroupId(g).build()));
        assertFalse(plugin.driver().engine().volumeArtifacts().contains(v2));
        assertTrue(plugin.driver().engine().volumeArtifacts().contains(v1));
        seed().deleteVolumeGroup(DeleteVolumeGroupRequest.newBuilder().setVolumeGroupId(g).build());    // gone: OK
    }

    @Test
    void secretsMarkedWithTheVariantsOwnOptionAreRedactedByTheServer() {
        // the server reads the request with its own schema, where field 3 carries csi.v1.csi_secret
        String secret = "seed-secret-" + System.nanoTime();
        Logger log = Logger.getLogger(CallLogInterceptor.LOGGER);
        List<String> lines = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override public void publish(LogRecord r) { lines.add(String.valueOf(r.getMessage())); }
            @Override public void flush() {}
            @Override public void close() {}
        };
        Level before = log.getLevel();
        log.setLevel(Level.FINE);
        log.addHandler(capture);
        try {
            seed().createVolumeGroup(CreateVolumeGroupRequest.newBuilder().setName("g").putSecrets("token", secret).build());
        } finally {
            log.removeHandler(capture);
            log.setLevel(before);
        }
        assertTrue(lines.stream().anyMatch(l -> l.contains("CreateVolumeGroup request") && l.contains("***")), lines.toString());
        assertTrue(lines.stream().noneMatch(l -> l.contains(secret)), lines.toString());
    }

    /** Each VgVolume is, field by field and as a whole, the csi.v1.Volume ControllerGetVolume answers. */
    private void assertMembersDecode(VolumeGroup group, Set<String> expected) {
        assertEquals(expected, new TreeSet<>(group.getVolumesList().stream().map(VgVolume::getVolumeId).toList()));
        for (VgVolume member : group.getVolumesList()) {
            Volume csi = plugin.getVolume(member.getVolumeId());
            assertEquals(csi.getCapacityBytes(), member.getCapacityBytes());
            assertTrue(member.getCapacityBytes() > 0);
            assertEquals(csi.getVolumeContextMap(), member.getVolumeContextMap());
            assertFalse(member.getVolumeContextMap().isEmpty());
            assertEquals(csi.getContentSource().getSnapshot().getSnapshotId(), member.getContentSource().getSnapshot().getSnapshotId());
            assertEquals(csi.getContentSource().hasSnapshot(), member.getContentSource().hasSnapshot());
            assertEquals(csi.getAccessibleTopologyCount(), member.getAccessibleTopologyCount());
            assertEquals(Map.of("topology.csi4j.io/node", "node-a"), member.getAccessibleTopology(0).getSegmentsMap());
            try {
                assertEquals(csi, Volume.parseFrom(member.toByteString()));      // and back: nothing lost on the way
            } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                throw new AssertionError(e);
            }
            assertTrue(member.getUnknownFields().asMap().isEmpty(), "fields the variant does not know: " + member.getUnknownFields());
        }
    }
}
