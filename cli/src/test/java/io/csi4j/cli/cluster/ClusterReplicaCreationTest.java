package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ReplicaFixture.nodes;
import static io.csi4j.cli.cluster.ReplicaFixture.onlyOn;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.ClusterStatusGrpc;
import io.csi4j.proto.cluster.GetClusterStatusRequest;
import io.csi4j.proto.cluster.ReplicatedVolumeStatus;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteSnapshotRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.NodeGetInfoRequest;
import io.csi4j.proto.csi.Topology;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeContentSource;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a replicated volume's creation may ask (issue 28, docs/replication.md "Creation"), with a controller and three
 * image-engine agents as real processes over mutual TLS on loopback, in two zones ({@code --topology
 * topology.kubernetes.io/zone=...}: node-a and node-b in zone-1, node-c in zone-2): replicas spread over the zones
 * ({@code csi4j.io/replica-spread-key}), or RESOURCE_EXHAUSTED with nothing left on any node; the interval of a
 * VolumeAttributesClass named at creation (CreateVolume's mutable_parameters) in effect, the replica count refused
 * there; and a plain clone, and a plain restore of a snapshot, of a replicated volume made from its current primary's
 * copy, byte-identical.
 */
class ClusterReplicaCreationTest {
    static final long MIB = ReplicaFixture.MIB;
    static final String ZONE = "topology.kubernetes.io/zone";
    static final Map<String, String> ZONES = Map.of("node-a", "zone-1", "node-b", "zone-1", "node-c", "zone-2");
    static final int RECORDS = 1500;

    static ReplicaFixture f;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> f = new ReplicaFixture(dir,
            node -> List.of("--copy-bandwidth", "64M", "--topology", ZONE + "=" + ZONES.get(node)), List.of()));

    @Test
    void replicasSpreadOverTheZonesOrNothingIsMade() throws Exception {
        // the agent reports its zone beside its node, as the kubelet's registration reads it
        var info = f.node("node-c").nodeGetInfo(NodeGetInfoRequest.getDefaultInstance());
        assertEquals(Map.of("topology.csi4j.io/node", "node-c", ZONE, "zone-2"), info.getAccessibleTopology().getSegmentsMap());
        Map<String, List<String>> before = everything();

        // two replicas: one in each zone, whichever node of zone-1 has more room
        Volume spread = f.csi().createVolume(spread("rep-spread", 2)).getVolume();
        List<String> nodes = nodes(spread);
        assertEquals(2, nodes.size(), nodes.toString());
        assertEquals(Set.of("zone-1", "zone-2"), Set.of(ZONES.get(nodes.get(0)), ZONES.get(nodes.get(1))), nodes.toString());

        // the pod's node named alone (--strict-topology): the primary there, the secondary in the other zone, never node-a
        Volume strict = f.csi().createVolume(spread("rep-spread-strict", 2).toBuilder().setAccessibilityRequirements(onlyOn("node-b")).build()).getVolume();
        assertEquals(List.of("node-b", "node-c"), nodes(strict));
        Volume strictC = f.csi().createVolume(spread("rep-spread-strict-c", 2).toBuilder().setAccessibilityRequirements(onlyOn("node-c")).build()).getVolume();
        assertEquals("node-c", nodes(strictC).getFirst());
        assertEquals("zone-1", ZONES.get(nodes(strictC).get(1)));

        Map<String, List<String>> made = everything();
        // three replicas in two zones: RESOURCE_EXHAUSTED (CSI's "unable to provision in accessible_topology"), nothing made
        var three = assertThrows(StatusRuntimeException.class, () -> f.csi().createVolume(spread("rep-spread-3", 3)));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, three.getStatus().getCode(), three.getStatus().toString());
        assertTrue(three.getStatus().getDescription().contains("3 replicas need 3 distinct values of " + ZONE), three.getStatus().getDescription());
        assertTrue(three.getStatus().getDescription().contains("[zone-1, zone-2]"), three.getStatus().getDescription());
        assertEquals(made, everything(), "nothing of the refused create on any node");

        // a key no node has: the same, and a key that is no topology key: INVALID_ARGUMENT
        var none = assertThrows(StatusRuntimeException.class, () -> f.csi().createVolume(spread("rep-spread-rack", 2).toBuilder()
                .putParameters("csi4j.io/replica-spread-key", "example.com/rack").build()));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, none.getStatus().getCode(), none.getStatus().toString());
        var bad = assertThrows(StatusRuntimeException.class, () -> f.csi().createVolume(spread("rep-spread-bad", 2).toBuilder()
                .putParameters("csi4j.io/replica-spread-key", "Not A Key").build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, bad.getStatus().getCode(), bad.getStatus().toString());
        assertEquals(made, everything(), "nothing of the refused creates on any node");

        // a retry by name answers the same volume
        assertEquals(spread.getVolumeId(), f.csi().createVolume(spread("rep-spread", 2)).getVolume().getVolumeId());
        for (Volume v : List.of(spread, strict, strictC)) f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).build());
        assertEquals(before, everything(), "nothing is left on any node");
    }

    @Test
    void theIntervalOfAVolumeAttributesClassNamedAtCreationIsInEffect() throws Exception {
        Map<String, List<String>> before = everything();
        // the replica count is not mutable; a bad interval is refused; nothing made (checked before the volume of a 5 s
        // interval exists: its rounds change the nodes' files whenever they run)
        for (var mutable : List.of(Map.of("csi4j.io/replicas", "3"), Map.of("csi4j.io/replication-interval", "2s"))) {
            var e = assertThrows(StatusRuntimeException.class, () -> f.csi().createVolume(ReplicaFixture.replicated("rep-vac-bad", 2, 16 * MIB)
                    .toBuilder().putAllMutableParameters(mutable).build()));
            assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), mutable + ": " + e.getStatus());
            assertTrue(e.getStatus().getDescription().contains(mutable.keySet().iterator().next()), e.getStatus().getDescription());
        }
        // an ordinary volume has no interval to take
        var plain = assertThrows(StatusRuntimeException.class, () -> f.csi().createVolume(CreateVolumeRequest.newBuilder().setName("plain-vac")
                .addVolumeCapabilities(ReplicaFixture.ext4()).putMutableParameters("csi4j.io/replication-interval", "5s").build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, plain.getStatus().getCode(), plain.getStatus().toString());
        assertEquals(before, everything(), "nothing of the refused creates on any node");

        // the StorageClass says a day; the class named at creation says 5 s, and wins (the spec's precedence)
        Volume v = f.csi().createVolume(ReplicaFixture.replicated("rep-vac", 2, 16 * MIB, "24h").toBuilder()
                .putMutableParameters("csi4j.io/replication-interval", "5s").build()).getVolume();
        String id = v.getVolumeId();
        long made = System.nanoTime();
        var synced = await(id, s -> s.getSecondariesCount() == 1 && s.getSecondaries(0).getHasRound());
        System.out.printf("interval 5s named at creation: first round done %.1f s after create%n", (System.nanoTime() - made) / 1e9);
        assertEquals(5000, synced.getIntervalMillis());

        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        assertEquals(before, everything(), "nothing is left on any node");
    }

    @Test
    void aPlainCloneOrRestoreOfAReplicatedVolumeHoldsItsCurrentPrimarysRecords() throws Exception {
        Map<String, List<String>> before = everything();
        Volume rep = f.csi().createVolume(ReplicaFixture.replicated("rep-src", 2, 64 * MIB)).getVolume();
        String id = rep.getVolumeId();
        var tags = ReplicatedVolumeId.parse(id).orElseThrow().tags();
        String first = tags.get(0), second = tags.get(1);
        f.controllerPublish(first, id);
        ClusterReplicationTest.writeRecords(f.publish(first, id, f.stage(first, id)).resolve("records"), 0, RECORDS);
        f.unpublishAndUnstage(first, id);
        // hand it over, so its current primary is not the node its id names first
        f.controllerPublish(second, id);
        f.csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(second).build());
        assertEquals("PRIMARY", f.role(second, id));

        var fromVolume = VolumeContentSource.newBuilder().setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(id)).build();
        Volume clone = f.csi().createVolume(CreateVolumeRequest.newBuilder().setName("plain-clone").addVolumeCapabilities(ReplicaFixture.ext4())
                .setCapacityRange(io.csi4j.proto.csi.CapacityRange.newBuilder().setRequiredBytes(64 * MIB))
                .setVolumeContentSource(fromVolume).build()).getVolume();
        assertEquals(List.of(second), nodes(clone), "made on the source's current primary");
        assertTrue(ReplicatedVolumeId.parse(clone.getVolumeId()).isEmpty(), "an ordinary volume: " + clone.getVolumeId());
        assertEquals(64 * MIB, clone.getCapacityBytes());
        assertEquals(id, clone.getContentSource().getVolume().getVolumeId());
        f.controllerPublish(second, clone.getVolumeId());
        ClusterReplicationTest.assertRecords(f.publish(second, clone.getVolumeId(), f.stage(second, clone.getVolumeId())).resolve("records"), RECORDS);
        f.unpublishAndUnstage(second, clone.getVolumeId());

        // for a pod on a node that holds no replica (a requisite topology of that node): copied there from the primary
        String third = ReplicaFixture.NODES.stream().filter(n -> !tags.contains(n)).findFirst().orElseThrow();
        Volume copied = f.csi().createVolume(CreateVolumeRequest.newBuilder().setName("plain-clone-there").addVolumeCapabilities(ReplicaFixture.ext4())
                .setCapacityRange(io.csi4j.proto.csi.CapacityRange.newBuilder().setRequiredBytes(64 * MIB))
                .setAccessibilityRequirements(onlyOn(third)).setVolumeContentSource(fromVolume).build()).getVolume();
        assertEquals(List.of(third), nodes(copied));
        f.controllerPublish(third, copied.getVolumeId());
        ClusterReplicationTest.assertRecords(f.publish(third, copied.getVolumeId(), f.stage(third, copied.getVolumeId())).resolve("records"), RECORDS);
        f.unpublishAndUnstage(third, copied.getVolumeId());

        // a snapshot of the replicated volume, restored into an ordinary volume: the same records
        String snapshot = f.csi().createSnapshot(CreateSnapshotRequest.newBuilder().setName("rep-src-snap").setSourceVolumeId(id).build())
                .getSnapshot().getSnapshotId();
        Volume restored = f.csi().createVolume(CreateVolumeRequest.newBuilder().setName("plain-restore").addVolumeCapabilities(ReplicaFixture.ext4())
                .setCapacityRange(io.csi4j.proto.csi.CapacityRange.newBuilder().setRequiredBytes(64 * MIB))
                .setVolumeContentSource(VolumeContentSource.newBuilder().setSnapshot(VolumeContentSource.SnapshotSource.newBuilder()
                        .setSnapshotId(snapshot))).build()).getVolume();
        assertEquals(List.of(second), nodes(restored));
        f.controllerPublish(second, restored.getVolumeId());
        ClusterReplicationTest.assertRecords(f.publish(second, restored.getVolumeId(), f.stage(second, restored.getVolumeId())).resolve("records"), RECORDS);
        f.unpublishAndUnstage(second, restored.getVolumeId());

        for (String v : List.of(clone.getVolumeId(), copied.getVolumeId(), restored.getVolumeId())) f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v).build());
        f.csi().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(snapshot).build());
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        assertEquals(before, everything(), "nothing is left on any node");
    }

    static CreateVolumeRequest spread(String name, int replicas) {
        return ReplicaFixture.replicated(name, replicas, 16 * MIB).toBuilder().putParameters("csi4j.io/replica-spread-key", ZONE).build();
    }

    static Map<String, List<String>> everything() throws Exception {
        Map<String, List<String>> all = new HashMap<>();
        for (String n : ReplicaFixture.NODES) all.put(n, f.everything(n));
        return all;
    }

    static ReplicatedVolumeStatus await(String id, Predicate<ReplicatedVolumeStatus> done) throws Exception {
        var status = ClusterStatusGrpc.newBlockingStub(f.cluster.controllerChannel());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        ReplicatedVolumeStatus last = null;
        while (System.nanoTime() < deadline) {
            last = status.withDeadlineAfter(20, TimeUnit.SECONDS).getClusterStatus(GetClusterStatusRequest.getDefaultInstance())
                    .getVolumesList().stream().filter(v -> v.getVolumeId().equals(id)).findFirst().orElse(null);
            if (last != null && done.test(last)) return last;
            Thread.sleep(500);
        }
        throw new AssertionError("volume " + id + " not as awaited within 90 s: " + last);
    }
}
