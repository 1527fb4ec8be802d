package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.ControllerGetVolumeRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The CO's calls that must get past a primary whose node is gone (issue 28, docs/replication.md "Unpublish from a
 * silent primary" and "Deletion"), with real processes: two image-engine agents and a controller started with
 * {@code --failover-after 6s}. Kubernetes force-detaches a volume from a node it gave up on and attaches it elsewhere
 * only once that detach succeeded, and deletes a volume only once it is detached everywhere: so
 * ControllerUnpublishVolume from the silent primary fails the volume over (UNAVAILABLE before the delay), and
 * DeleteVolume goes on past a primary silent for the delay (tombstones; its copy fenced and swept when it returns).
 */
class ClusterSilentPrimaryTest {
    static final int FAILOVER_AFTER_S = 6;

    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, FAILOVER_AFTER_S));

    /**
     * A replicated volume published and staged on its primary's node, {@code replicated} records written and a round
     * taken, {@code more} written after it; then the primary's agent SIGKILLed by its pid (its mounts stay in the
     * kernel). Returns the volume and when the agent was killed.
     */
    static Killed publishedThenPrimaryKilled(String name, int replicated, int more) throws Exception {
        var volume = fx.createReplicated(name);
        fx.controllerPublish(volume.primary(), volume.id());
        Path records = fx.stageAndPublish(volume.primary(), volume.id()).resolve("records");
        writeRecords(records, 0, replicated);
        fx.round(volume.secondary(), volume.primary(), volume.id());
        writeRecords(records, replicated, replicated + more);   // after the last complete point: the node loss costs them
        fx.cluster.agent(volume.primary()).child.signal("KILL");
        return new Killed(volume, System.nanoTime());
    }

    record Killed(FailoverPair.Replicated volume, long at) {}

    /** The killed agent started again (same data directory), if it is not running, and every node answering. */
    static void restarted(String node) throws Exception {
        var agent = fx.cluster.agent(node);
        if (agent.child == null || !agent.child.alive()) {
            agent.start();
            fx.cluster.awaitEveryNode();
        }
    }

    /** Calls {@code call} each second while it answers UNAVAILABLE, for 90 s at most; how many UNAVAILABLE came first. */
    static int retryWhileUnavailable(Runnable call, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        int unavailable = 0;
        while (true) {
            try {
                call.run();
                return unavailable;
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() > deadline) {
                    throw new AssertionError(what + ": " + e.getStatus() + "\ncontroller:\n" + fx.cluster.controller.stderr(), e);
                }
                unavailable++;
                Thread.sleep(1000);
            }
        }
    }

    static void unpublish(String id, String node) {
        fx.csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(node).build());
    }

    static void delete(String id) {
        fx.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
    }

    static void awaitState(String node, String id, String expected, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!fx.state(node, id).contains(expected)) {
            if (System.nanoTime() > deadline) throw new AssertionError(what + ": " + fx.state(node, id) + "\ncontroller:\n" + fx.cluster.controller.stderr());
            Thread.sleep(250);
        }
    }

    @Test
    void anUnpublishFromASilentPrimaryFailsItOverSoTheVolumeCanBeAttachedElsewhere() throws Exception {
        var killed = publishedThenPrimaryKilled("silent-unpublish", 2000, 500);
        String id = killed.volume().id(), a = killed.volume().primary(), b = killed.volume().secondary();
        long killedAt = killed.at();
        boolean bMounted = false;
        try {
            // the CO's force-detach from the lost node: UNAVAILABLE while the node may only be slow, then OK
            var early = assertThrows(StatusRuntimeException.class, () -> unpublish(id, a));
            assertEquals(Status.Code.UNAVAILABLE, early.getStatus().getCode(), early.getStatus().toString());
            assertTrue(early.getStatus().getDescription().contains("failover after " + FAILOVER_AFTER_S + "s"), early.getStatus().toString());
            int unavailable = 1 + retryWhileUnavailable(() -> unpublish(id, a), "unpublish from the silent primary");
            long waited = (System.nanoTime() - killedAt) / 1_000_000;
            System.out.printf("unpublish of %s from its silent primary %s: OK %d ms after the kill, %d UNAVAILABLE first%n",
                    id, a, waited, unavailable);
            assertTrue(waited >= (FAILOVER_AFTER_S - 1) * 1000L, "not failed over before the delay: " + waited + " ms");
            assertTrue(fx.state(b, id).contains("\"PRIMARY\""), "the detach promoted the secondary: " + fx.state(b, id));
            unpublish(id, a);                               // idempotent: OK again, nothing changes
            var condition = fx.csi().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build())
                    .getStatus().getVolumeCondition();
            assertTrue(condition.getAbnormal() && condition.getMessage().contains("replacing node '" + a + "'"), condition.toString());

            // the attach elsewhere is immediate now (no second wait), and serves every record up to the last round
            long attach = System.nanoTime();
            fx.controllerPublish(b, id);
            Path moved = fx.stageAndPublish(b, id);
            bMounted = true;
            System.out.printf("then publish and stage on %s: %d ms%n", b, (System.nanoTime() - attach) / 1_000_000);
            assertRecords(moved.resolve("records"), 2000);

            // the old primary comes back: fenced within a few ticks, never writable again
            restarted(a);
            awaitState(a, id, "\"FENCED\"", "the returning primary fences its copy");
        } finally {
            restarted(a);
            fx.unpublishAndUnstage(a, id);                  // "kubelet" cleans up the dead pod's mounts
            if (bMounted) fx.unpublishAndUnstage(b, id);
        }
        unpublish(id, b);
        retryWhileUnavailable(() -> delete(id), "delete once every node answers");
    }

    @Test
    void aDeletePastAPrimarySilentForTheDelayLeavesTombstonesAndItsCopyIsFencedAndSweptWhenItReturns() throws Exception {
        // staged on its node (the CO lost track of it: the worst case), then its node goes silent
        var killed = publishedThenPrimaryKilled("silent-delete", 500, 0);
        String id = killed.volume().id(), a = killed.volume().primary(), b = killed.volume().secondary();
        boolean aMounted = true;
        try {
            var early = assertThrows(StatusRuntimeException.class, () -> delete(id));
            assertEquals(Status.Code.UNAVAILABLE, early.getStatus().getCode(), early.getStatus().toString());
            assertTrue(early.getStatus().getDescription().contains("may hold its primary"), early.getStatus().toString());
            assertFalse(fx.state(b, id).isEmpty(), "nothing deleted before the delay");
            retryWhileUnavailable(() -> delete(id), "delete past the silent primary");
            long waited = (System.nanoTime() - killed.at()) / 1_000_000;
            System.out.printf("delete of %s past its silent primary %s: OK %d ms after the kill%n", id, a, waited);
            assertTrue(waited >= (FAILOVER_AFTER_S - 1) * 1000L, "not deleted before the delay: " + waited + " ms");
            assertEquals("", fx.state(b, id), "the secondary's replica is gone");
            assertTrue(Files.exists(CLUSTER.dir().resolve(b).resolve("replication").resolve(id + ".deleted")), "with a tombstone on " + b);
            var gone = assertThrows(StatusRuntimeException.class, () -> fx.csi().controllerGetVolume(
                    ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build()));
            assertEquals(Status.Code.NOT_FOUND, gone.getStatus().getCode(), gone.getStatus().toString());
            delete(id);                                     // idempotent

            // back: its copy (still staged) is fenced at once, and deleted once its mounts are gone
            restarted(a);
            awaitState(a, id, "\"FENCED\"", "the returning primary of a deleted volume is fenced first");
            assertFalse(fx.state(a, id).isEmpty(), "kept while staged (an image is never deleted from under a mount)");
            fx.unpublishAndUnstage(a, id);                  // "kubelet" cleans up the dead pod's mounts
            aMounted = false;
            long swept = System.nanoTime();
            long deadline = swept + TimeUnit.SECONDS.toNanos(60);
            while (!fx.state(a, id).isEmpty() || Files.exists(CLUSTER.dir().resolve(a).resolve("replication").resolve(id + ".json"))) {
                if (System.nanoTime() > deadline) throw new AssertionError("not swept from " + a + " within 60 s\ncontroller:\n" + fx.cluster.controller.stderr());
                Thread.sleep(250);
            }
            System.out.printf("its copy on %s swept %d ms after its mounts went%n", a, (System.nanoTime() - swept) / 1_000_000);
            assertEquals(java.util.List.of(), ReplicaFixture.loops(id), "no loop device left of " + id);
            assertEquals(Status.Code.NOT_FOUND, assertThrows(StatusRuntimeException.class, () -> fx.csi().controllerGetVolume(
                    ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build())).getStatus().getCode());
        } finally {
            restarted(a);
            if (aMounted) fx.unpublishAndUnstage(a, id);
        }
    }
}
