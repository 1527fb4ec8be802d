package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ReplicaFixture.nodes;
import static io.csi4j.cli.cluster.ReplicaFixture.onlyOn;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteSnapshotRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.Topology;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeContentSource;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Restore and clone into replicated volumes (issue 28, docs/replication.md "Creation"), with a controller and three
 * agents as real processes: checksummed records written into an ordinary volume through a real mount, snapshotted;
 * a replicated volume restored from the snapshot for a pod on another node (a requisite topology of that node only) has
 * its primary on the snapshot's node and a secondary on the pod's, which gets the data by the first round the
 * controller starts at once, and after a handoff the secondary serves every record; a clone
 * of that replicated volume (from its current primary) is a new replicated volume with the same records. A source
 * larger than the limit is OUT_OF_RANGE with nothing left on any node; at the end nothing is left at all.
 */
class ClusterReplicaSourceTest {
    static final long MIB = ReplicaFixture.MIB;
    static final int RECORDS = 2000;

    static ReplicaFixture f;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> f = new ReplicaFixture(dir, List.of("--copy-bandwidth", "64M"), List.of()));

    @Test
    void aReplicatedVolumeFromASnapshotOrAReplicatedVolumeHoldsTheSourcesData() throws Exception {
        Map<String, List<String>> before = new HashMap<>();
        for (String n : ReplicaFixture.NODES) before.put(n, f.everything(n));
        long t0 = System.nanoTime();

        // an ordinary volume with checksummed records, snapshotted
        Volume plain = f.csi().createVolume(CreateVolumeRequest.newBuilder().setName("src-plain").addVolumeCapabilities(ReplicaFixture.ext4())
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(64 * MIB)).build()).getVolume();
        String s = nodes(plain).getFirst();
        f.controllerPublish(s, plain.getVolumeId());
        ClusterReplicationTest.writeRecords(f.publish(s, plain.getVolumeId(), f.stage(s, plain.getVolumeId())).resolve("records"), 0, RECORDS);
        f.unpublishAndUnstage(s, plain.getVolumeId());
        String snapshot = f.csi().createSnapshot(CreateSnapshotRequest.newBuilder().setName("src-snap")
                .setSourceVolumeId(plain.getVolumeId()).build()).getSnapshot().getSnapshotId();
        var fromSnapshot = VolumeContentSource.newBuilder().setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snapshot)).build();

        // the capacity rules of an ordinary restore: a limit below the source's size, and nothing is left anywhere
        Map<String, List<String>> withSource = new HashMap<>();
        for (String n : ReplicaFixture.NODES) withSource.put(n, f.everything(n));
        var small = assertThrows(StatusRuntimeException.class, () -> f.csi().createVolume(ReplicaFixture.replicated("rep-small", 2, 0)
                .toBuilder().setCapacityRange(CapacityRange.newBuilder().setLimitBytes(32 * MIB)).setVolumeContentSource(fromSnapshot).build()));
        assertEquals(Status.Code.OUT_OF_RANGE, small.getStatus().getCode(), small.getStatus().toString());
        for (String n : ReplicaFixture.NODES) assertEquals(withSource.get(n), f.everything(n), "nothing of the refused create on " + n);

        // a blank one whose requisite topology names one node (Kubernetes' --strict-topology): its primary is there,
        // and the other nodes hold its secondaries all the same
        String pod = ReplicaFixture.NODES.stream().filter(n -> !n.equals(s)).findFirst().orElseThrow();
        Volume blank = f.csi().createVolume(ReplicaFixture.replicated("rep-blank-strict", 3, 16 * MIB).toBuilder()
                .setAccessibilityRequirements(onlyOn(pod)).build()).getVolume();
        assertEquals(pod, nodes(blank).getFirst());
        assertEquals(3, nodes(blank).size());
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(blank.getVolumeId()).build());

        // restore for a pod on another node than the snapshot's (the requisite topology names that node only): the
        // primary on the snapshot's node (a reflink there), a secondary on the pod's node; its first round starts at once
        Volume restored = f.csi().createVolume(ReplicaFixture.replicated("rep-restored", 2, 64 * MIB).toBuilder()
                .setVolumeContentSource(fromSnapshot).setAccessibilityRequirements(onlyOn(pod)).build()).getVolume();
        String id = restored.getVolumeId();
        var tags = ReplicatedVolumeId.parse(id).orElseThrow().tags();
        assertEquals(s, tags.get(0), "the primary is on the snapshot's node");
        assertEquals(List.of(s, pod), nodes(restored), "a secondary on the node the requisite topology names");
        assertEquals(64 * MIB, restored.getCapacityBytes());
        assertEquals(snapshot, restored.getContentSource().getSnapshot().getSnapshotId());
        String b = tags.get(1);
        long firstRound = awaitPoint(b, id);
        assertEquals("PRIMARY", f.role(s, id));
        assertEquals("SECONDARY", f.role(b, id));

        // hand over to the secondary (a planned move): every record is there, byte-identical
        f.controllerPublish(b, id);
        ClusterReplicationTest.assertRecords(f.publish(b, id, f.stage(b, id)).resolve("records"), RECORDS);
        f.unpublishAndUnstage(b, id);
        assertEquals("PRIMARY", f.role(b, id));

        // a clone of the replicated volume: made from its current primary's copy (b), a new replicated volume
        var fromReplicated = VolumeContentSource.newBuilder().setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(id)).build();
        Volume clone = f.csi().createVolume(ReplicaFixture.replicated("rep-clone", 2, 64 * MIB).toBuilder()
                .setVolumeContentSource(fromReplicated).build()).getVolume();
        String cloneId = clone.getVolumeId();
        var cloneTags = ReplicatedVolumeId.parse(cloneId).orElseThrow().tags();
        assertEquals(b, cloneTags.get(0), "the clone's primary is on its source's current primary");
        assertEquals(List.of(b, cloneTags.get(1)), nodes(clone));
        awaitPoint(cloneTags.get(1), cloneId);
        // staged on its primary, and then on its secondary after a handoff: the records both times
        f.controllerPublish(b, cloneId);
        ClusterReplicationTest.assertRecords(f.publish(b, cloneId, f.stage(b, cloneId)).resolve("records"), RECORDS);
        f.unpublishAndUnstage(b, cloneId);
        String c = cloneTags.get(1);
        f.controllerPublish(c, cloneId);
        ClusterReplicationTest.assertRecords(f.publish(c, cloneId, f.stage(c, cloneId)).resolve("records"), RECORDS);
        f.unpublishAndUnstage(c, cloneId);
        System.out.printf("replicated restore and clone: first round of the restore in %d ms, whole test %d ms%n",
                firstRound, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));

        // everything deleted: nothing is left on any node
        for (String v : List.of(cloneId, id)) f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v).build());
        f.csi().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(snapshot).build());
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(plain.getVolumeId()).build());
        for (String n : ReplicaFixture.NODES) assertEquals(before.get(n), f.everything(n), "nothing is left on " + n);
    }

    /** Waits (bounded) until {@code node}'s copy holds a point: the first round the controller started; its time in ms. */
    static long awaitPoint(String node, String id) throws Exception {
        long start = System.nanoTime();
        long deadline = start + TimeUnit.SECONDS.toNanos(90);
        while (f.point(node, id).isEmpty()) {
            if (System.nanoTime() > deadline) throw new AssertionError("no first round of " + id + " on " + node + " within 90 s");
            Thread.sleep(200);
        }
        assertFalse(f.point(node, id).isEmpty());
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }
}
