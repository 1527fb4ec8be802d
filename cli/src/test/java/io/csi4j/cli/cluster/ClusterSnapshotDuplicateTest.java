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
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
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

    /** Restored into an ordinary volume on {@code node} (the snapshot's), mounted there: the 1000 records, byte-identical. */
    static void assertRestores(Snapshot snapshot, String node, String name) throws Exception {
        String restored = f.csi().createVolume(CreateVolumeRequest.newBuilder().setName(name).addVolumeCapabilities(ext4())
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(64 * ReplicaFixture.MIB))
                .setVolumeContentSource(VolumeContentSource.newBuilder().setSnapshot(VolumeContentSource.SnapshotSource.newBuilder()
                        .setSnapshotId(snapshot.getSnapshotId()))).build()).getVolume().getVolumeId();
        try {
            assertEquals(ObjectId.nodeTag(node), ObjectId.parse(ObjectId.Kind.VOLUME, restored).orElseThrow().nodeTag());
            Path target = mount(node, restored);
            try {
                assertRecords(target.resolve("records"), 1000);
            } finally {
                f.unpublishAndUnstage(node, restored);
            }
        } finally {
            f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(restored).build());
        }
    }

    /** CreateSnapshot as a CO sends it: again after UNAVAILABLE (a node just back may not be heard yet), for a bounded time. */
    static Snapshot retried(CreateSnapshotRequest request) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SWEEP_BOUND_S);
        while (true) {
            try {
                return f.csi().createSnapshot(request).getSnapshot();
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() > deadline) throw e;
                System.out.println("CreateSnapshot UNAVAILABLE, retried: " + e.getStatus().getDescription());
                Thread.sleep(1000);
            }
        }
    }

    /** Waits until {@code node} holds no snapshot of {@code name}; the seconds it took from {@code since}. */
    static double awaitSwept(String node, String name, long since, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SWEEP_BOUND_S);
        while (!heldOn(node, name).isEmpty()) {
            if (System.nanoTime() > deadline) throw new AssertionError(what + " still there " + SWEEP_BOUND_S + " s later");
            Thread.sleep(250);
        }
        return (System.nanoTime() - since) / 1e9;
    }

    /** A replicated volume of two nodes, {@code a} (its first primary) and {@code b}, and its snapshot {@code onA} by name. */
    record CutOnA(String id, String a, String b, CreateSnapshotRequest request, Snapshot onA) {}

    /**
     * The common start: a replicated volume {@code <name>-rep} with 1000 records written on a, the snapshot {@code name}
     * cut there, then the handoff (a mount on b makes b the primary, with every record).
     */
    static CutOnA cutOnAThenHandOff(String name) throws Exception {
        String id = f.csi().createVolume(ReplicaFixture.replicated(name + "-rep", 2, 64 * ReplicaFixture.MIB)).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0);
        String b = parsed.tags().get(1);
        writeRecords(mount(a, id).resolve("records"), 0, 1000);
        f.unpublishAndUnstage(a, id);

        var request = CreateSnapshotRequest.newBuilder().setSourceVolumeId(id).setName(name).build();
        Snapshot onA = f.csi().createSnapshot(request).getSnapshot();
        assertEquals(ObjectId.nodeTag(a), ownerTag(onA.getSnapshotId()));

        mount(b, id);                                       // the handoff: b is the primary, with every record
        f.unpublishAndUnstage(b, id);
        return new CutOnA(id, a, b, request, onA);
    }

    /**
     * The end state once the sweep is done: {@code kept} is the one snapshot of the name, a retry answers it, a listing
     * by source finds it alone, and it restores every record on {@code node}; then both are deleted.
     */
    static void assertKeptAloneThenDelete(CutOnA v, Snapshot kept, String node, String restoreName) throws Exception {
        assertEquals(kept.getSnapshotId(), f.csi().createSnapshot(v.request()).getSnapshot().getSnapshotId(), "the retry answers the kept one");
        assertEquals(List.of(kept.getSnapshotId()), f.csi().listSnapshots(ListSnapshotsRequest.newBuilder().setSourceVolumeId(v.id()).build())
                .getEntriesList().stream().map(e -> e.getSnapshot().getSnapshotId()).toList());
        assertRestores(kept, node, restoreName);          // restores every record, byte-identical
        f.csi().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(kept.getSnapshotId()).build());
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v.id()).build());
    }

    @Test
    void aRetryWhileTheHolderIsSilentCutsASecondOneAndTheOlderIsSweptWhenItAnswers() throws Exception {
        CutOnA v = cutOnAThenHandOff("dup");
        String a = v.a();
        String b = v.b();

        var agentA = f.cluster.agent(a);
        agentA.child.signal("STOP");
        Snapshot onB;
        try {
            // the CO did not record the first answer and retries; a's silence is not waited for: b cuts it again
            long retry = System.nanoTime();
            onB = f.csi().createSnapshot(v.request()).getSnapshot();
            System.out.printf("retry with %s stopped answered in %.1f s: %s%n", a, (System.nanoTime() - retry) / 1e9, onB.getSnapshotId());
            assertEquals(ObjectId.nodeTag(b), ownerTag(onB.getSnapshotId()), "cut again on the new primary: " + onB);
            assertNotEquals(v.onA().getSnapshotId(), onB.getSnapshotId());
        } finally {
            agentA.child.signal("CONT");
        }
        long resumed = System.nanoTime();
        // both nodes hold the name: a retry answers the newest, b's
        assertEquals(onB, f.csi().createSnapshot(v.request()).getSnapshot());

        double swept = awaitSwept(a, "dup", resumed, "a's older duplicate " + v.onA().getSnapshotId());
        System.out.printf("older duplicate %s on %s swept %.1f s after SIGCONT; %s on %s kept%n", v.onA().getSnapshotId(), a,
                swept, onB.getSnapshotId(), b);
        assertEquals(onB.getSnapshotId(), heldOn(b, "dup"), "the newest stays");
        assertEquals(onB, f.csi().createSnapshot(v.request()).getSnapshot(), "the retry answers b's again");
        assertKeptAloneThenDelete(v, onB, b, "dup-restore");
    }

    /**
     * Two silences in turn: the retry cut on B while A was silent is lost too; then B is silent and A back, and a second
     * retry is answered with A's, which the CO records. When B answers again the sweep must delete B's (created later,
     * answered earlier), not the one the CO holds: the one answered last is the newest.
     */
    @Test
    void theOneAnsweredLastIsKeptThoughCreatedFirst() throws Exception {
        CutOnA v = cutOnAThenHandOff("dup2");
        String a = v.a();
        String b = v.b();

        var agentA = f.cluster.agent(a);
        var agentB = f.cluster.agent(b);
        Snapshot onB;
        Snapshot recorded;
        agentA.child.signal("STOP");
        try {
            onB = f.csi().createSnapshot(v.request()).getSnapshot();      // its answer "lost": the CO retries
            assertEquals(ObjectId.nodeTag(b), ownerTag(onB.getSnapshotId()));
            agentB.child.signal("STOP");
            try {
                agentA.child.signal("CONT");
                recorded = retried(v.request());                             // only a answers: its own, recorded
                assertEquals(v.onA().getSnapshotId(), recorded.getSnapshotId());
            } finally {
                agentB.child.signal("CONT");
            }
        } finally {
            agentA.child.signal("CONT");                              // a no-op when it runs already
        }
        long resumed = System.nanoTime();
        double swept = awaitSwept(b, "dup2", resumed, "b's duplicate " + onB.getSnapshotId() + " (answered earlier)");
        System.out.printf("duplicate %s on %s, created later but answered earlier, swept %.1f s after SIGCONT; %s on %s kept%n",
                onB.getSnapshotId(), b, swept, v.onA().getSnapshotId(), a);
        assertEquals(v.onA().getSnapshotId(), heldOn(a, "dup2"), "the snapshot the CO recorded stays");
        assertKeptAloneThenDelete(v, v.onA(), a, "dup2-restore");
    }
}
