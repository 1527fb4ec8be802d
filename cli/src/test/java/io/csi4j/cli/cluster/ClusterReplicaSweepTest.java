package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.csi.ControllerGetVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.ListVolumesRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * DeleteVolume of a replicated volume while a replica's node is down (issue 28, docs/replication.md "Deletion"), with
 * real processes: the answering nodes delete their replicas and keep a tombstone; the silent node's leftover is swept
 * when its agent comes back; the id is never shown again. A silent node that may hold the primary keeps the delete
 * UNAVAILABLE with nothing deleted.
 */
class ClusterReplicaSweepTest {
    static ReplicaFixture f;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> f = new ReplicaFixture(dir, List.of("--copy-bandwidth", "64M"), List.of()));

    static Status.Code code(Runnable call) {
        return assertThrows(StatusRuntimeException.class, call::run).getStatus().getCode();
    }

    static void delete(String id) {
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
    }

    static Status.Code getVolume(String id) {
        return code(() -> f.csi().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build()));
    }

    static Map<String, List<String>> everything() throws Exception {
        Map<String, List<String>> all = new HashMap<>();
        for (String n : ReplicaFixture.NODES) all.put(n, f.everything(n));
        return all;
    }

    @Test
    void aDeleteWithASecondaryDownIsOkAndItsLeftoverIsSweptWhenItReturns() throws Exception {
        var before = everything();
        String id = f.csi().createVolume(ReplicaFixture.replicated("sweep-secondary", 3, 64 * ReplicaFixture.MIB)).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0), b = parsed.tags().get(1), c = parsed.tags().get(2);
        f.round(b, a, id);                           // points on the primary, replicas of them on both secondaries
        f.round(c, a, id);
        for (String n : List.of(a, b, c)) assertTrue(f.catalogRows(n, id) > 0, "a row of " + id + " on " + n);
        assertTrue(f.catalogRows(a, id) >= 3, "the volume and a point per secondary on the primary");

        var agentB = f.cluster.agent(b);
        agentB.child.kill();                         // SIGKILL: the leftover is whatever it had on disk
        try {
            delete(id);                              // OK although b does not answer
            delete(id);                              // and again: still OK, nothing more happens
            String tombstone = f.dataDir(a).resolve("replication").resolve(id + ".deleted").toString();
            for (String n : List.of(a, c)) {
                String own = f.dataDir(n).resolve("replication").resolve(id + ".deleted").toString();
                var expected = new ArrayList<>(before.get(n));
                expected.add(own);
                java.util.Collections.sort(expected);
                assertEquals(expected, f.everything(n), "on " + n + " only the tombstone is left of " + id);
                assertEquals(0, f.catalogRows(n, id), "no row of " + id + " (volume or point) on " + n);
            }
            assertTrue(Files.exists(Path.of(tombstone)));
            assertEquals(List.of(), ReplicaFixture.loops(id));
            assertEquals(Status.Code.NOT_FOUND, getVolume(id), "deleted, although a replica's node is silent");
            assertEquals("SECONDARY", f.role(b, id), "the killed node's leftover is still on its disk");
        } finally {
            agentB.start();
        }

        // b's agent is back with the same data directory: its leftover goes within a bounded time, never shown meanwhile
        long started = System.nanoTime();
        long deadline = started + TimeUnit.SECONDS.toNanos(90);
        while (!f.files(b, id).isEmpty() || f.catalogRows(b, id) > 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the leftover of " + id + " on " + b + " was not swept within 90 s: " + f.files(b, id)
                        + "\ncontroller:\n" + f.cluster.controller.stderr());
            }
            assertEquals(Status.Code.NOT_FOUND, getVolume(id));
            Thread.sleep(250);
        }
        System.out.printf("leftover of %s swept from %s %d ms after its agent restarted%n", id, b, (System.nanoTime() - started) / 1_000_000);
        f.cluster.awaitEveryNode();
        assertEquals(before.get(b), f.everything(b), "nothing of " + id + " is left on " + b + " (it keeps no tombstone)");
        assertEquals(List.of(), ReplicaFixture.loops(id));
        assertFalse(f.csi().listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesList().stream()
                .anyMatch(e -> e.getVolume().getVolumeId().equals(id)), "ListVolumes never shows it again");
        assertEquals(Status.Code.NOT_FOUND, getVolume(id));
        delete(id);                                  // every node answers now: OK, and nothing comes back
        Thread.sleep(3_000);                         // a few scheduler ticks: no round, no sweep brings anything back
        assertEquals(before.get(b), f.everything(b));
        for (String n : List.of(a, c)) {
            assertTrue(Files.exists(f.dataDir(n).resolve("replication").resolve(id + ".deleted")),
                    "the tombstones outlive the sweep (they go " + "after a grace, docs/replication.md)");
            assertEquals(0, f.catalogRows(n, id));
        }
    }

    @Test
    void aDeleteWithThePrimaryDownIsUnavailableAndDeletesNothing() throws Exception {
        var before = everything();
        String id = f.csi().createVolume(ReplicaFixture.replicated("sweep-primary", 2, 64 * ReplicaFixture.MIB)).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0), b = parsed.tags().get(1);
        f.round(b, a, id);
        var secondaryFiles = f.everything(b);
        var agentA = f.cluster.agent(a);
        agentA.child.kill();
        try {
            var down = assertThrows(StatusRuntimeException.class, () -> delete(id));
            assertEquals(Status.Code.UNAVAILABLE, down.getStatus().getCode(), down.getStatus().toString());
            assertTrue(down.getStatus().getDescription().contains("may hold its primary"), down.getStatus().toString());
            assertEquals(secondaryFiles, f.everything(b), "nothing deleted on the answering secondary, no tombstone");
            assertEquals("SECONDARY", f.role(b, id));
        } finally {
            agentA.start();
        }
        f.cluster.awaitEveryNode();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                delete(id);
                break;
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() > deadline) throw e;
                Thread.sleep(500);
            }
        }
        var after = everything();
        for (String n : ReplicaFixture.NODES) {
            assertEquals(before.get(n), after.get(n), "nothing of " + id + " is left on " + n + ", no tombstone: every node answered");
            assertEquals(0, f.catalogRows(n, id));
        }
        assertEquals(Status.Code.NOT_FOUND, getVolume(id));
    }
}
