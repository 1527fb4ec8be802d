package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static io.csi4j.cli.cluster.ReplicaFixture.ext4;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.FindSnapshotRequest;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteSnapshotRequest;
import io.csi4j.proto.csi.DeleteVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.GetVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.GroupControllerGrpc;
import io.csi4j.proto.csi.ListSnapshotsRequest;
import io.csi4j.proto.csi.Snapshot;
import io.csi4j.proto.csi.TopologyRequirement;
import io.csi4j.proto.csi.VolumeContentSource;
import io.csi4j.proto.csi.VolumeGroupSnapshot;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 28, snapshots of replicated volumes with real processes (a controller, three image-engine agents): a group
 * snapshot's replicated member is cut on its current primary (before and after a handoff) and restores every record
 * byte-identical; a CreateSnapshot retried by name after a handoff returns the snapshot taken before it, nothing new
 * on the new primary.
 */
class ClusterReplicaSnapshotTest {
    static ReplicaFixture f;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> f = new ReplicaFixture(dir, List.of("--copy-bandwidth", "32M"), List.of()));
    /** Volumes mounted and not yet unmounted ({node, id}): a failed test leaves no mount behind. */
    static final java.util.Set<List<String>> MOUNTED = ConcurrentHashMap.newKeySet();

    /** Before the cluster stops (an extension's afterAll runs after the class's @AfterAll). */
    @AfterAll
    static void unmountWhatAFailureLeft() {
        for (List<String> m : List.copyOf(MOUNTED)) {
            try {
                unmount(m.get(0), m.get(1));
            } catch (RuntimeException e) {
                System.err.println("unmounting " + m + " after a failure: " + e);
            }
        }
    }

    static GroupControllerGrpc.GroupControllerBlockingStub groups() {
        return GroupControllerGrpc.newBlockingStub(f.cluster.controllerChannel()).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    static String tag(String node) {
        return ObjectId.nodeTag(node);
    }

    static String ownerTag(String snapshotId) {
        return ObjectId.parse(ObjectId.Kind.SNAPSHOT, snapshotId).orElseThrow().nodeTag();
    }

    /** ControllerPublish (a replicated volume: the handoff when the primary is elsewhere), stage and publish. */
    static Path mount(String node, String id) throws Exception {
        f.controllerPublish(node, id);
        MOUNTED.add(List.of(node, id));
        return f.publish(node, id, f.stage(node, id));
    }

    static void unmount(String node, String id) {
        f.unpublishAndUnstage(node, id);
        MOUNTED.remove(List.of(node, id));
    }

    static String ordinary(String name, String node) {
        return f.csi().createVolume(CreateVolumeRequest.newBuilder().setName(name).addVolumeCapabilities(ext4())
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(64 * ReplicaFixture.MIB))
                .setAccessibilityRequirements(TopologyRequirement.newBuilder().addRequisite(ClusterRoutingTest.on(node))).build())
                .getVolume().getVolumeId();
    }

    /** A snapshot restored into an ordinary volume (on the snapshot's node), mounted there: its records are checked. */
    static void assertRestores(Snapshot member, String node, int records) throws Exception {
        String restored = f.csi().createVolume(CreateVolumeRequest.newBuilder().setName("restore-" + member.getSnapshotId())
                .addVolumeCapabilities(ext4()).setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(64 * ReplicaFixture.MIB))
                .setVolumeContentSource(VolumeContentSource.newBuilder().setSnapshot(VolumeContentSource.SnapshotSource.newBuilder()
                        .setSnapshotId(member.getSnapshotId()))).build()).getVolume().getVolumeId();
        try {
            Path target = mount(node, restored);
            try {
                assertRecords(target.resolve("records"), records);
            } finally {
                unmount(node, restored);
            }
        } finally {
            f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(restored).build());
        }
    }

    static Snapshot memberOf(VolumeGroupSnapshot g, String source) {
        return g.getSnapshotsList().stream().filter(s -> s.getSourceVolumeId().equals(source)).findFirst().orElseThrow(() -> new AssertionError(g.toString()));
    }

    static Status.Code code(Runnable call) {
        return assertThrows(StatusRuntimeException.class, call::run).getStatus().getCode();
    }

    /**
     * The ordinary member lives on the replicated volume's secondary node: a router that does not find the primary
     * would send both there and cut the secondary's copy (it holds none of the records: no round ran).
     */
    @Test
    void aGroupSnapshotCutsTheReplicatedMemberOnItsPrimaryBeforeAndAfterAHandoff() throws Exception {
        String id = f.csi().createVolume(ReplicaFixture.replicated("group-rep", 2, 64 * ReplicaFixture.MIB)).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0);
        String b = parsed.tags().get(1);
        String plain = ordinary("group-plain", b);

        Path records = mount(a, id).resolve("records");
        writeRecords(records, 0, 2000);
        Path plainRecords = mount(b, plain).resolve("records");
        writeRecords(plainRecords, 0, 500);

        // published and staged while cut: each node freezes its member, cuts, thaws
        VolumeGroupSnapshot first = groups().createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder()
                .setName("group-before").addSourceVolumeIds(id).addSourceVolumeIds(plain).build()).getGroupSnapshot();
        assertEquals(2, first.getSnapshotsCount(), first.toString());
        assertEquals(tag(a), ownerTag(memberOf(first, id).getSnapshotId()), "the replicated member is cut on its primary");
        assertEquals(tag(b), ownerTag(memberOf(first, plain).getSnapshotId()));
        assertTrue(first.getReadyToUse());
        // a retry by name is the same group snapshot
        assertEquals(first, groups().createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder()
                .setName("group-before").addSourceVolumeIds(id).addSourceVolumeIds(plain).build()).getGroupSnapshot());
        unmount(b, plain);
        unmount(a, id);
        assertRestores(memberOf(first, id), a, 2000);
        assertRestores(memberOf(first, plain), b, 500);

        // the handoff: b becomes the primary with every record; the next group snapshot is cut there
        Path moved = mount(b, id).resolve("records");
        assertRecords(moved, 2000);
        // a retry of the first by name: the same group, where it was cut (not cut again on b, not ALREADY_EXISTS)
        assertEquals(first, groups().createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder()
                .setName("group-before").addSourceVolumeIds(id).addSourceVolumeIds(plain).build()).getGroupSnapshot());
        writeRecords(moved, 2000, 3000);
        VolumeGroupSnapshot after = groups().createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder()
                .setName("group-after").addSourceVolumeIds(id).addSourceVolumeIds(plain).build()).getGroupSnapshot();
        assertEquals(tag(b), ownerTag(memberOf(after, id).getSnapshotId()), "after the handoff the new primary cuts it");
        assertEquals(tag(b), ownerTag(memberOf(after, plain).getSnapshotId()));
        unmount(b, id);
        assertRestores(memberOf(after, id), b, 3000);
        // back to a: a retry of the second (one node's, on b) by name is still b's
        mount(a, id);
        unmount(a, id);
        assertEquals(after, groups().createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder()
                .setName("group-after").addSourceVolumeIds(id).addSourceVolumeIds(plain).build()).getGroupSnapshot());

        // Get and Delete of both (the first spans nodes, the second is one node's) by their ids
        for (VolumeGroupSnapshot g : List.of(first, after)) {
            var got = groups().getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(g.getGroupSnapshotId()).build())
                    .getGroupSnapshot();
            assertEquals(g.getSnapshotsList().stream().map(Snapshot::getSnapshotId).sorted().toList(),
                    got.getSnapshotsList().stream().map(Snapshot::getSnapshotId).sorted().toList());
            groups().deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(g.getGroupSnapshotId()).build());
            assertEquals(Status.Code.NOT_FOUND, code(() -> groups().getVolumeGroupSnapshot(
                    GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(g.getGroupSnapshotId()).build())));
        }
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(plain).build());
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
    }

    @Test
    void aCreateSnapshotRetriedAfterAHandoffReturnsTheSnapshotTakenBefore() throws Exception {
        String id = f.csi().createVolume(ReplicaFixture.replicated("retry-rep", 2, 64 * ReplicaFixture.MIB)).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0);
        String b = parsed.tags().get(1);
        writeRecords(mount(a, id).resolve("records"), 0, 1000);
        unmount(a, id);

        var request = CreateSnapshotRequest.newBuilder().setSourceVolumeId(id).setName("retried").build();
        Snapshot taken = f.csi().createSnapshot(request).getSnapshot();
        assertEquals(tag(a), ownerTag(taken.getSnapshotId()));

        mount(b, id);                                      // the handoff: b is the primary now
        unmount(b, id);
        Snapshot retried = f.csi().createSnapshot(request).getSnapshot();
        assertEquals(taken.getSnapshotId(), retried.getSnapshotId(), "the same name and source: the snapshot taken before");
        assertEquals(taken.getCreationTime(), retried.getCreationTime());
        assertEquals("", f.agent(b).withDeadlineAfter(60, TimeUnit.SECONDS)
                .findSnapshot(FindSnapshotRequest.newBuilder().setName("retried").build()).getSnapshotId(), "nothing cut on the new primary");
        // the same name with another source: ALREADY_EXISTS
        String other = ordinary("retry-other", a);
        assertEquals(Status.Code.ALREADY_EXISTS, code(() -> f.csi().createSnapshot(
                CreateSnapshotRequest.newBuilder().setSourceVolumeId(other).setName("retried").build())));
        // a new name is the new primary's; listing by source finds both nodes' snapshots
        Snapshot fresh = f.csi().createSnapshot(CreateSnapshotRequest.newBuilder().setSourceVolumeId(id).setName("fresh").build()).getSnapshot();
        assertEquals(tag(b), ownerTag(fresh.getSnapshotId()));
        assertEquals(List.of(fresh.getSnapshotId(), taken.getSnapshotId()).stream().sorted().toList(),
                f.csi().listSnapshots(ListSnapshotsRequest.newBuilder().setSourceVolumeId(id).build()).getEntriesList().stream()
                        .map(e -> e.getSnapshot().getSnapshotId()).sorted().toList());
        assertRestores(retried, a, 1000);

        for (String s : List.of(taken.getSnapshotId(), fresh.getSnapshotId())) {
            f.csi().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(s).build());
        }
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(other).build());
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
    }
}
