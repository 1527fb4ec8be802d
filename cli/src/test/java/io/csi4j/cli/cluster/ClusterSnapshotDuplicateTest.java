package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static io.csi4j.cli.cluster.ReplicaFixture.ext4;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.FindSnapshotRequest;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteSnapshotRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.ListSnapshotsRequest;
import io.csi4j.proto.csi.Snapshot;
import io.csi4j.proto.csi.VolumeContentSource;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 28, two snapshots of one name and source (docs/replication.md, "Snapshots"), with real processes (a controller
 * and three image-engine agents): a snapshot cut on A, a handoff to B, A's agent SIGSTOPped, CreateSnapshot retried by
 * name: A does not answer, so B cuts a second one. Once A answers again the retry answers B's (the newest: the CO holds
 * or will hold it), and the controller's sweep deletes A's older one on A; B's restores every record.
 */
class ClusterSnapshotDuplicateTest {
    /** Far above the sweep's period (5 s) and a tick's listing of a node that just came back. */
    private static final long SWEEP_BOUND_S = 60;

    static ReplicaFixture f;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> f = new ReplicaFixture(dir, List.of("--copy-bandwidth", "32M"), List.of()));

    static String ownerTag(String snapshotId) {
        return ObjectId.parse(ObjectId.Kind.SNAPSHOT, snapshotId).orElseThrow().nodeTag();
    }

    static Path mount(String node, String id) throws Exception {
        f.controllerPublish(node, id);
        return f.publish(node, id, f.stage(node, id));
    }

    /** The snapshot of {@code name} on {@code node} ("" for none), asked of its agent directly. */
    static String heldOn(String node, String name) {
        return f.agent(node).withDeadlineAfter(60, TimeUnit.SECONDS)
                .findSnapshot(FindSnapshotRequest.newBuilder().setName(name).build()).getSnapshotId();
    }

    @Test
    void aRetryWhileTheHolderIsSilentCutsASecondOneAndTheOlderIsSweptWhenItAnswers() throws Exception {
        String id = f.csi().createVolume(ReplicaFixture.replicated("dup-rep", 2, 64 * ReplicaFixture.MIB)).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0);
        String b = parsed.tags().get(1);
        writeRecords(mount(a, id).resolve("records"), 0, 1000);
        f.unpublishAndUnstage(a, id);

        var request = CreateSnapshotRequest.newBuilder().setSourceVolumeId(id).setName("dup").build();
        Snapshot onA = f.csi().createSnapshot(request).getSnapshot();
        assertEquals(ObjectId.nodeTag(a), ownerTag(onA.getSnapshotId()));

        mount(b, id);                                       // the handoff: b is the primary, with every record
        f.unpublishAndUnstage(b, id);

        var agentA = f.cluster.agent(a);
        agentA.child.signal("STOP");
        Snapshot onB;
        try {
            // the CO did not record the first answer and retries; a's silence is not waited for: b cuts it again
            long retry = System.nanoTime();
            onB = f.csi().createSnapshot(request).getSnapshot();
            System.out.printf("retry with %s stopped answered in %.1f s: %s%n", a, (System.nanoTime() - retry) / 1e9, onB.getSnapshotId());
            assertEquals(ObjectId.nodeTag(b), ownerTag(onB.getSnapshotId()), "cut again on the new primary: " + onB);
            assertNotEquals(onA.getSnapshotId(), onB.getSnapshotId());
        } finally {
            agentA.child.signal("CONT");
        }
        long resumed = System.nanoTime();
        // both nodes hold the name: a retry answers the newest, b's
        assertEquals(onB, f.csi().createSnapshot(request).getSnapshot());

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SWEEP_BOUND_S);
        while (!heldOn(a, "dup").isEmpty()) {
            if (System.nanoTime() > deadline) throw new AssertionError("a's older duplicate " + onA.getSnapshotId()
                    + " still there " + SWEEP_BOUND_S + " s after its agent answered again");
            Thread.sleep(250);
        }
        System.out.printf("older duplicate %s on %s swept %.1f s after SIGCONT; %s on %s kept%n", onA.getSnapshotId(), a,
                (System.nanoTime() - resumed) / 1e9, onB.getSnapshotId(), b);
        assertEquals(onB.getSnapshotId(), heldOn(b, "dup"), "the newest stays");
        assertEquals(onB, f.csi().createSnapshot(request).getSnapshot(), "the retry answers b's again");
        assertEquals(List.of(onB.getSnapshotId()), f.csi().listSnapshots(ListSnapshotsRequest.newBuilder().setSourceVolumeId(id).build())
                .getEntriesList().stream().map(e -> e.getSnapshot().getSnapshotId()).toList());

        // b's restores every record, byte-identical (an ordinary volume on b, the snapshot's node)
        String restored = f.csi().createVolume(CreateVolumeRequest.newBuilder().setName("dup-restore").addVolumeCapabilities(ext4())
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(64 * ReplicaFixture.MIB))
                .setVolumeContentSource(VolumeContentSource.newBuilder().setSnapshot(VolumeContentSource.SnapshotSource.newBuilder()
                        .setSnapshotId(onB.getSnapshotId()))).build()).getVolume().getVolumeId();
        try {
            assertEquals(ObjectId.nodeTag(b), ObjectId.parse(ObjectId.Kind.VOLUME, restored).orElseThrow().nodeTag());
            Path target = mount(b, restored);
            try {
                assertRecords(target.resolve("records"), 1000);
            } finally {
                f.unpublishAndUnstage(b, restored);
            }
        } finally {
            f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(restored).build());
        }
        f.csi().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(onB.getSnapshotId()).build());
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
    }
}
