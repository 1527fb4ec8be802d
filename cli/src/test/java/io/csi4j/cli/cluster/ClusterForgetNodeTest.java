package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.util.JsonFormat;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.AgentStatus;
import io.csi4j.proto.cluster.ForgottenNode;
import io.csi4j.proto.cluster.GetClusterStatusResponse;
import io.csi4j.proto.csi.ControllerGetVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code csi4j cluster forget-node} with real processes (docs/replication.md, "A node lost for good"): three agents, a
 * replicated volume over them, one agent SIGKILLed and the volume deleted (a tombstone on each other node, kept for
 * good while the dead node is only silent); forget-node refused for a live node and for one silent less than
 * --failover-after, and while it may hold the primary of a live volume (until that volume is failed over by an attach
 * elsewhere); the dead node forgotten, recorded on both other agents; their tombstones go at the next tick past the
 * grace; that live volume is routed and deleted without it (no tombstone); the mark survives a controller restart (read back from the agents); the node's agent brought back with
 * its leftover is refused, and the deleted volume stays NOT_FOUND, also right after another controller restart.
 */
class ClusterForgetNodeTest {
    private static final Duration FAILOVER_AFTER = Duration.ofSeconds(8);
    static ReplicaFixture f;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> f = new ReplicaFixture(dir, List.of(),
            List.of("--failover-after", FAILOVER_AFTER.toSeconds() + "s")));

    static GetClusterStatusResponse status() throws Exception {
        var run = f.cli("cluster", "status", "-o", "json");
        if (run.out().isBlank()) throw new IllegalStateException("no status: " + run.err());
        var builder = GetClusterStatusResponse.newBuilder();
        JsonFormat.parser().merge(run.out(), builder);
        return builder.build();
    }

    static Path tombstone(String node, String id) {
        return f.dataDir(node).resolve("replication").resolve(id + ".deleted");
    }

    /** The tombstone as if written {@code age} ago (the grace is 10 minutes: no test waits it out); renamed into place. */
    static void backdate(String node, String id, Duration age) throws Exception {
        Path file = tombstone(node, id);
        Path tmp = file.resolveSibling("backdate.partial");
        Files.writeString(tmp, "{\"deletedAt\":\"" + Instant.now().minus(age).getEpochSecond() + "\"}\n", StandardCharsets.UTF_8);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    static Status.Code getVolume(String id) {
        return assertThrows(StatusRuntimeException.class, () -> f.csi().controllerGetVolume(
                ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build())).getStatus().getCode();
    }

    static AgentStatus agentOf(GetClusterStatusResponse s, String node) {
        return s.getAgentsList().stream().filter(a -> a.getAddress().equals(f.cluster.agent(node).address())).findFirst().orElseThrow();
    }

    @Test
    void aLostNodeForgottenLetsItsPeersTombstonesGoAndIsRefusedIfItReturns() throws Exception {
        String id = f.csi().createVolume(ReplicaFixture.replicated("forget-node", 3, 64 * ReplicaFixture.MIB)).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0), b = parsed.tags().get(1), c = parsed.tags().get(2);
        f.round(c, a, id);                                   // c holds a point: its leftover is a real copy
        // a live volume whose primary is on c, its secondary on x holding a point
        String held = f.csi().createVolume(ReplicaFixture.replicated("forget-node-held", 2, 64 * ReplicaFixture.MIB).toBuilder()
                .setAccessibilityRequirements(ReplicaFixture.onlyOn(c)).build()).getVolume().getVolumeId();
        var heldIds = ReplicatedVolumeId.parse(held).orElseThrow();
        assertEquals(c, heldIds.tags().get(0), "the primary of " + held + " on " + c);
        String x = heldIds.tags().get(1);
        f.round(x, c, held);
        // an ordinary volume on c and a snapshot of it: gone with c once c is forgotten
        String plain = f.csi().createVolume(io.csi4j.proto.csi.CreateVolumeRequest.newBuilder().setName("forget-node-plain")
                .addVolumeCapabilities(ReplicaFixture.ext4())
                .setCapacityRange(io.csi4j.proto.csi.CapacityRange.newBuilder().setRequiredBytes(64 * ReplicaFixture.MIB))
                .setAccessibilityRequirements(ReplicaFixture.onlyOn(c)).build()).getVolume().getVolumeId();
        assertTrue(plain.endsWith("-" + c), plain + " lives on " + c);
        String plainSnap = f.csi().createSnapshot(io.csi4j.proto.csi.CreateSnapshotRequest.newBuilder().setName("forget-node-plain-snap")
                .setSourceVolumeId(plain).build()).getSnapshot().getSnapshotId();

        // you cannot forget a live node
        var live = f.cli("cluster", "forget-node", a);
        assertEquals(1, live.exit(), live.out() + live.err());
        assertTrue(live.err().startsWith("FAILED_PRECONDITION: node '" + a + "' answers"), live.err());

        var agentC = f.cluster.agent(c);
        agentC.child.kill();                                 // SIGKILL: c's copy stays on its disk
        long killed = System.nanoTime();
        var early = f.cli("cluster", "forget-node", c);
        if (System.nanoTime() - killed < FAILOVER_AFTER.toNanos() - TimeUnit.SECONDS.toNanos(2)) {   // not asserted if the machine stalled
            assertEquals(1, early.exit(), early.out() + early.err());
            // the controller may not have missed a heartbeat yet ("answers"), or counts its silence ("silent for")
            assertTrue(early.err().startsWith("FAILED_PRECONDITION: node '" + c + "' "), early.err());
            assertTrue(early.err().contains("' has been silent for") || early.err().contains("' answers"), early.err());
        }
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());   // OK: c is a silent secondary
        for (String n : List.of(a, b)) {
            assertTrue(Files.exists(tombstone(n, id)), "a tombstone on " + n);
            backdate(n, id, Duration.ofMinutes(11));         // past Sweep.GRACE: only c's silence keeps them now
        }
        Thread.sleep(3_000);                                 // a few ticks
        for (String n : List.of(a, b)) assertTrue(Files.exists(tombstone(n, id)), "kept while " + c + " is only silent, on " + n);
        assertTrue(status().getForgottenNodesList().isEmpty());

        // once silent for --failover-after: still refused, c may hold the primary of a live volume
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        ClusterStatusTest.Run forgot;
        while (!(forgot = f.cli("cluster", "forget-node", c)).err().contains("may hold the primary")) {
            assertEquals(1, forgot.exit(), forgot.out() + forgot.err());
            assertTrue(forgot.err().startsWith("FAILED_PRECONDITION: node '" + c + "' "), forgot.err());
            assertTrue(System.nanoTime() < deadline, "never past the silence check: " + forgot.err());
            Thread.sleep(500);
        }
        assertEquals(1, forgot.exit());
        assertTrue(forgot.err().startsWith("FAILED_PRECONDITION: node '" + c + "' may hold the primary of 1 replicated volume(s) ["
                + held + "]"), forgot.err());
        // accepting possible loss lets an unconfirmed primary count, never no primary at all (x holds a SECONDARY)
        var accepting = f.cli("cluster", "forget-node", c, "--accept-possible-loss");
        assertEquals(1, accepting.exit(), accepting.out() + accepting.err());
        assertTrue(accepting.err().startsWith("FAILED_PRECONDITION: node '" + c + "' may hold the primary of 1 replicated volume(s) ["
                + held + "]"), accepting.err());
        f.controllerPublish(x, held);                        // the CO's attach elsewhere fails it over to x (c silent past the delay)
        f.csi().controllerUnpublishVolume(io.csi4j.proto.csi.ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(held)
                .setNodeId(x).build());
        forgot = f.cli("cluster", "forget-node", c);
        assertEquals(0, forgot.exit(), forgot.out() + forgot.err());
        System.out.printf("forget-node %s accepted %d ms after its agent was killed: %s", c, (System.nanoTime() - killed) / 1_000_000,
                forgot.out());
        assertTrue(forgot.out().contains("recorded by " + String.join(",", List.of(a, b).stream().sorted().toList())), forgot.out());
        for (String n : List.of(a, b)) {
            String marks = Files.readString(f.dataDir(n).resolve("replication").resolve("forgotten.nodes"));
            assertTrue(marks.contains("\"" + c + "\""), n + " holds the mark durably: " + marks);
        }
        assertEquals(0, f.cli("cluster", "forget-node", c).exit(), "forgetting it again is OK");

        // the tombstones go at the next tick: c counts as a node that answered holding nothing
        long forgotten = System.nanoTime();
        deadline = forgotten + TimeUnit.SECONDS.toNanos(30);
        while (Files.exists(tombstone(a, id)) || Files.exists(tombstone(b, id))) {
            assertTrue(System.nanoTime() < deadline, "tombstones of " + id + " still there 30 s after forget-node\n"
                    + f.cluster.controller.stderr());
            Thread.sleep(200);
        }
        System.out.printf("tombstones gone %d ms after forget-node%n", (System.nanoTime() - forgotten) / 1_000_000);
        assertEquals(Status.Code.NOT_FOUND, getVolume(id));
        // the spec's DeleteVolume/DeleteSnapshot: OK when the artifacts "do not exist anymore" (a CO can remove the PV
        // and the VolumeSnapshotContent); other calls of them answer NOT_FOUND naming the node
        f.csi().deleteSnapshot(io.csi4j.proto.csi.DeleteSnapshotRequest.newBuilder().setSnapshotId(plainSnap).build());
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(plain).build());
        assertEquals(Status.Code.NOT_FOUND, getVolume(plain));

        var shown = status();
        assertEquals(List.of(c), shown.getForgottenNodesList().stream().map(ForgottenNode::getNodeId).toList());
        var table = f.cli("cluster", "status");
        assertEquals(0, table.exit(), "a forgotten node's silent agent does not make status fail: " + table.out());
        assertTrue(table.out().contains("forgotten (csi4j cluster forget-node): " + c + " at "), table.out());

        // the mark is the agents': a restarted controller reads it back
        f.cluster.controller.kill();
        f.cluster.restartController();
        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                if (status().getForgottenNodesCount() == 1) break;
            } catch (Exception | AssertionError starting) {
                // the controller's socket is not up yet
            }
            assertTrue(System.nanoTime() < deadline, "the restarted controller never showed " + c + " forgotten");
            Thread.sleep(250);
        }

        // a live volume that named c is routed without it, and deleted without a tombstone (c is gone, not silent)
        f.csi().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(held).build());
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(held).build());
        assertEquals(Status.Code.NOT_FOUND, getVolume(held));
        assertFalse(Files.exists(tombstone(x, held)), "no tombstone of " + held + " on " + x);
        assertEquals(0, f.catalogRows(x, held));

        // c comes back with its leftover: refused, its copy never routed to
        agentC.start();
        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (agentOf(status(), c).getState() != AgentStatus.State.REFUSED) {
            assertTrue(System.nanoTime() < deadline, "the forgotten node's agent was never refused: " + status());
            assertEquals(Status.Code.NOT_FOUND, getVolume(id), "the deleted volume never comes back");
            Thread.sleep(250);
        }
        assertTrue(agentOf(status(), c).getReason().contains("node '" + c + "' was forgotten"), agentOf(status(), c).getReason());
        assertEquals(Status.Code.NOT_FOUND, getVolume(id));
        assertFalse(f.files(c, id).isEmpty(), "its leftover is left alone on its disk (documented: wipe it)");
        assertEquals(Status.Code.NOT_FOUND, getVolume(held), "its old primary of a deleted volume is never routed to");

        // a controller started while the forgotten agent answers refuses it before it serves anything
        f.cluster.controller.kill();
        f.cluster.restartController();
        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        GetClusterStatusResponse first = null;
        while (first == null) {
            try {
                first = status();
            } catch (Exception | AssertionError starting) {
                assertTrue(System.nanoTime() < deadline, "the controller never came back");
                Thread.sleep(250);
            }
        }
        assertEquals(AgentStatus.State.REFUSED, agentOf(first, c).getState(), "refused from the controller's first answer: " + first);
        assertEquals(Status.Code.NOT_FOUND, getVolume(id));
        var again = f.cli("cluster", "forget-node", a);
        assertTrue(again.err().startsWith("FAILED_PRECONDITION: node '" + a + "' answers"), again.err());
    }
}
