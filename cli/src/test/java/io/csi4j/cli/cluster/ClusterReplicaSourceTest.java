package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteSnapshotRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.proto.csi.Topology;
import io.csi4j.proto.csi.TopologyRequirement;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeContentSource;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

    @TempDir
    static Path tmp;
    static ReplicaFixture f;
    static final Map<String, ManagedChannel> NODE_CHANNELS = new ConcurrentHashMap<>();

    @BeforeAll
    static void start() throws Exception {
        Privileged.requireRoot();
        f = new ReplicaFixture(tmp, List.of("--copy-bandwidth", "64M"), List.of());
    }

    @AfterAll
    static void stop() throws Exception {
        NODE_CHANNELS.values().forEach(ManagedChannel::shutdownNow);
        if (f != null) f.close();
    }

    @Test
    void aReplicatedVolumeFromASnapshotOrAReplicatedVolumeHoldsTheSourcesData() throws Exception {
        Map<String, List<String>> before = new HashMap<>();
        for (String n : ReplicaFixture.NODES) before.put(n, f.everything(n));
        long t0 = System.nanoTime();

        // an ordinary volume with checksummed records, snapshotted
        Volume plain = f.csi().createVolume(CreateVolumeRequest.newBuilder().setName("src-plain").addVolumeCapabilities(ReplicaFixture.ext4())
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(64 * MIB)).build()).getVolume();
        String s = nodes(plain).getFirst();
        controllerPublish(s, plain.getVolumeId());
        ClusterReplicationTest.writeRecords(publish(s, plain.getVolumeId(), stage(s, plain.getVolumeId())).resolve("records"), 0, RECORDS);
        unpublishAndUnstage(s, plain.getVolumeId());
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
        controllerPublish(b, id);
        ClusterReplicationTest.assertRecords(publish(b, id, stage(b, id)).resolve("records"), RECORDS);
        unpublishAndUnstage(b, id);
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
        controllerPublish(b, cloneId);
        ClusterReplicationTest.assertRecords(publish(b, cloneId, stage(b, cloneId)).resolve("records"), RECORDS);
        unpublishAndUnstage(b, cloneId);
        String c = cloneTags.get(1);
        controllerPublish(c, cloneId);
        ClusterReplicationTest.assertRecords(publish(c, cloneId, stage(c, cloneId)).resolve("records"), RECORDS);
        unpublishAndUnstage(c, cloneId);
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

    static TopologyRequirement onlyOn(String node) {
        var t = Topology.newBuilder().putSegments("topology.csi4j.io/node", node).build();
        return TopologyRequirement.newBuilder().addRequisite(t).addPreferred(t).build();
    }

    static List<String> nodes(Volume v) {
        return v.getAccessibleTopologyList().stream().map(Topology::getSegmentsMap).map(m -> m.get("topology.csi4j.io/node")).toList();
    }

    static NodeGrpc.NodeBlockingStub node(String nodeId) {
        var channel = NODE_CHANNELS.computeIfAbsent(nodeId, n -> Channels.connect(Endpoint.parse("unix://" + f.dataDir(n).resolve("csi.sock"))));
        return NodeGrpc.newBlockingStub(channel).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    static void controllerPublish(String node, String id) {
        f.csi().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(node)
                .setVolumeCapability(ReplicaFixture.ext4()).build());
    }

    static Path stage(String node, String id) throws Exception {
        Path staging = Files.createDirectories(tmp.resolve("staging-" + node).resolve(id));
        node(node).nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(staging.toString()).setVolumeCapability(ReplicaFixture.ext4()).build());
        return staging;
    }

    static Path publish(String node, String id, Path staging) throws Exception {
        Path target = tmp.resolve("target-" + node).resolve(id);
        Files.createDirectories(target.getParent());
        node(node).nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(ReplicaFixture.ext4()).build());
        return target;
    }

    static void unpublishAndUnstage(String node, String id) {
        node(node).nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id)
                .setTargetPath(tmp.resolve("target-" + node).resolve(id).toString()).build());
        node(node).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(tmp.resolve("staging-" + node).resolve(id).toString()).build());
        f.csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(node).build());
    }
}
