package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.addons.replication.ControllerGrpc;
import io.csi4j.proto.addons.replication.PromoteVolumeRequest;
import io.csi4j.proto.addons.replication.ReplicationSource;
import io.csi4j.proto.cluster.GetReplicaRequest;
import io.csi4j.proto.cluster.GetReplicaResponse;
import io.csi4j.proto.csi.ControllerGetVolumeRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.VolumeCondition;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The failover of a volume whose primary's node was forgotten while its other nodes were silent too (review 2026-11-27
 * s9, F2; docs/replication.md, "A node lost for good"), with real processes: a controller ({@code --failover-after 8s})
 * and four image-engine agents. node-d has the smallest pool, so it holds no copy (placement picks the roomiest nodes)
 * and answers throughout: it records the forget-node mark. A forgotten node is a primary silent for ever: publishing on
 * a node holding a copy fails over to it, as after {@code --failover-after} of silence, and the CO's detach from the
 * forgotten node does the same (ControllerUnpublishVolume from a silent primary).
 */
class ClusterForgottenPrimaryFailoverTest {
    private static final Duration FAILOVER_AFTER = Duration.ofSeconds(8);
    private static final List<String> NODES = List.of("node-a", "node-b", "node-c", "node-d");
    private static final String A = "node-a", RECORDER = "node-d";
    private static final int RECORDS = 1000;
    static ReplicaFixture f;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> {
        f = new ReplicaFixture(dir, NODES, node -> node.equals(RECORDER) ? List.of("--pool-size", "512M") : List.of(),
                List.of("--failover-after", FAILOVER_AFTER.toSeconds() + "s"));
        addons = Channels.connect(Endpoint.parse("unix://" + dir.resolve("controller").resolve("csi-addons.sock")));
        return f;
    });
    static ManagedChannel addons;

    /** Before the cluster stops (an extension's afterAll runs after the class's @AfterAll). */
    @AfterAll
    static void closeAddons() {
        if (addons != null) addons.shutdownNow();
    }

    @Test
    void publishingOnACopyFailsOverFromTheForgottenPrimaryAndSoDoTheDetachFromItAndAForcedPromote() throws Exception {
        // primary on node-a (the pod's node), copies on the two roomiest others: node-b and node-c, never node-d
        String id = create("forgotten-failover", 3);
        String id2 = create("forgotten-detach", 2);
        String id3 = create("forgotten-promote", 2);
        var tags = ReplicatedVolumeId.parse(id).orElseThrow().tags();
        assertEquals(A, tags.getFirst(), id);
        assertTrue(!tags.contains(RECORDER) && !ReplicatedVolumeId.parse(id2).orElseThrow().tags().contains(RECORDER), id + " " + id2);
        String b = tags.get(1), c = tags.get(2);
        String other = ReplicatedVolumeId.parse(id2).orElseThrow().tags().get(1);

        f.writeOnPrimary(A, id, 0, RECORDS);               // 4 KiB records, fsynced; unpublished from node-a after
        f.writeOnPrimary(A, id2, 0, RECORDS);
        f.round(c, A, id);                                 // every record is in c's and b's point
        var toB = f.round(b, A, id);                       // b's cut last: the copy a failover may take (FailoverTarget)
        var toOther = f.round(other, A, id2);
        String third = ReplicatedVolumeId.parse(id3).orElseThrow().tags().get(1);
        var toThird = f.round(third, A, id3);

        // F2: every node holding a copy is silent, so forget-node cannot see the volumes and accepts
        var agents = List.of(f.cluster.agent(A), f.cluster.agent(b), f.cluster.agent(c));
        for (var agent : agents) agent.child.kill();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            ClusterStatusTest.Run forgot;
            while ((forgot = f.cli("cluster", "forget-node", A)).exit() != 0) {
                assertTrue(forgot.err().startsWith("FAILED_PRECONDITION: node '" + A + "' "), forgot.err());
                assertTrue(System.nanoTime() < deadline, "forget-node never accepted: " + forgot.err());
                Thread.sleep(500);
            }
        } finally {
            f.cluster.agent(b).start();
            f.cluster.agent(c).start();
        }
        long back = System.nanoTime();

        // both copies answer: other calls are UNAVAILABLE, saying that a publish on a copy's node fails over to it
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        StatusRuntimeException e;
        while (!(e = getVolumeFails(id)).getStatus().getDescription().contains("copies on " + List.of(b, c).stream().sorted().toList())) {
            assertNotEquals(Status.Code.NOT_FOUND, e.getStatus().getCode(), e.toString());
            assertTrue(System.nanoTime() < deadline, "the copies never answered: " + e);
            Thread.sleep(250);
        }
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.toString());
        assertTrue(e.getStatus().getDescription().contains("forgotten node(s) [" + A + "]")
                && e.getStatus().getDescription().contains("ControllerPublishVolume on a node holding a copy fails over to it"), e.toString());

        // c's point is older than b's: a publish on c is refused naming b, before any copy learns an epoch
        var older = assertThrows(StatusRuntimeException.class, () -> f.controllerPublish(c, id));
        assertEquals(Status.Code.FAILED_PRECONDITION, older.getStatus().getCode(), older.toString());
        assertTrue(older.getStatus().getDescription().contains("older than the one on node '" + b + "'"), older.toString());
        assertEquals(1, replica(b, id).getEpoch());
        assertEquals(1, replica(c, id).getEpoch());

        // the CO attaches on b: b's latest complete point is promoted at epoch 2, at once (node-a is silent for ever)
        long publishing = System.nanoTime();
        f.controllerPublish(b, id);
        System.out.printf("%s failed over from forgotten %s to %s by ControllerPublishVolume in %d ms (%d s after the copies restarted)%n",
                id, A, b, (System.nanoTime() - publishing) / 1_000_000, (System.nanoTime() - back) / 1_000_000_000);
        Path staging = f.stage(b, id);
        try {
            Path target = f.publish(b, id, staging);
            Path records = target.resolve("records");
            assertEquals((long) RECORDS * ReplicaFixture.RECORD, Files.size(records), "exactly the records written");
            assertEquals(RECORDS, ReplicaFixture.records(records), "every record byte-identical");
            var onB = replica(b, id);
            assertEquals("PRIMARY", onB.getRole(), onB.toString());
            assertEquals(2, onB.getEpoch(), onB.toString());
            assertFailedOver(condition(id), toB.getPoint());

            // the other copy follows the new primary, as after any failover
            var onC = awaitReplica(c, id, r -> r.getRole().equals("SECONDARY") && r.getEpoch() == 2);
            System.out.printf("%s: %s follows %s at epoch %d%n", id, c, b, onC.getEpoch());

            // published on b: a publish on c is FAILED_PRECONDITION, as for any volume still published elsewhere
            var refused = publishRefused(c, id);
            assertEquals(Status.Code.FAILED_PRECONDITION, refused.getStatus().getCode(), refused.toString());
        } finally {
            f.unpublishAndUnstage(b, id);
        }

        // the CO's detach from the forgotten node fails over to the copy, and answers OK
        f.csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id2).setNodeId(A).build());
        var promoted = replica(other, id2);
        assertEquals("PRIMARY", promoted.getRole(), promoted.toString());
        assertEquals(2, promoted.getEpoch(), promoted.toString());
        assertFailedOver(condition(id2), toOther.getPoint());

        // CSI-Addons PromoteVolume: without force refused (the old primary is not demoted, it is lost), with force the
        // copy's point is promoted as by the attach
        var replication = ControllerGrpc.newBlockingStub(addons).withDeadlineAfter(120, TimeUnit.SECONDS);
        var source = ReplicationSource.newBuilder().setVolume(ReplicationSource.VolumeSource.newBuilder().setVolumeId(id3)).build();
        var unforced = assertThrows(StatusRuntimeException.class, () -> replication.promoteVolume(PromoteVolumeRequest.newBuilder()
                .setReplicationSource(source).build()));
        assertEquals(Status.Code.FAILED_PRECONDITION, unforced.getStatus().getCode(), unforced.toString());
        assertTrue(unforced.getStatus().getDescription().contains("forgotten node(s) [" + A + "]")
                && unforced.getStatus().getDescription().contains("with force"), unforced.toString());
        replication.promoteVolume(PromoteVolumeRequest.newBuilder().setReplicationSource(source).setForce(true).build());
        var forced = replica(third, id3);
        assertEquals("PRIMARY", forced.getRole(), forced.toString());
        assertEquals(2, forced.getEpoch(), forced.toString());
        assertFailedOver(condition(id3), toThird.getPoint());
    }

    private static String create(String name, int replicas) {
        return f.csi().createVolume(ReplicaFixture.replicated(name, replicas, 64 * ReplicaFixture.MIB).toBuilder()
                .setAccessibilityRequirements(ReplicaFixture.onlyOn(A)).build()).getVolume().getVolumeId();
    }

    private static StatusRuntimeException getVolumeFails(String id) {
        return assertThrows(StatusRuntimeException.class, () -> condition(id));
    }

    private static VolumeCondition condition(String id) {
        return f.csi().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build()).getStatus().getVolumeCondition();
    }

    private static void assertFailedOver(VolumeCondition condition, String point) {
        assertTrue(condition.getAbnormal(), condition.toString());
        assertTrue(condition.getMessage().contains("failed over at") && condition.getMessage().contains("from point " + point)
                && condition.getMessage().contains("replacing node '" + A + "'"), condition.toString());
    }

    private static GetReplicaResponse replica(String node, String id) {
        return f.agent(node).withDeadlineAfter(30, TimeUnit.SECONDS).getReplica(GetReplicaRequest.newBuilder().setVolumeId(id).build());
    }

    private static GetReplicaResponse awaitReplica(String node, String id, Predicate<GetReplicaResponse> done) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        GetReplicaResponse r = null;
        while (r == null || !done.test(r)) {
            assertTrue(System.nanoTime() < deadline, "not reached on " + node + " within 60 s: " + r);
            Thread.sleep(250);
            r = replica(node, id);
        }
        return r;
    }

    /** ControllerPublishVolume on {@code node}, asked again while a round holds the volume (ABORTED/UNAVAILABLE), 60 s at most. */
    private static StatusRuntimeException publishRefused(String node, String id) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            var e = assertThrows(StatusRuntimeException.class, () -> f.controllerPublish(node, id));
            var code = e.getStatus().getCode();
            if ((code != Status.Code.ABORTED && code != Status.Code.UNAVAILABLE) || System.nanoTime() > deadline) return e;
            Thread.sleep(500);
        }
    }
}
