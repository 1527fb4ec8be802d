package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterChecksumResyncKillTest.sha256;
import static io.csi4j.cli.cluster.ClusterChecksumResyncKillTest.sum;
import static io.csi4j.cli.cluster.ClusterChecksumResyncKillTest.write;
import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.GetReplicaRequest;
import io.csi4j.proto.cluster.ListCopiesRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A fenced old primary killed in the middle of its resync by checksums against its own image keeps either its old
 * image or the new complete point (docs/replication.md, "Resync by checksums"), with real processes: a controller with
 * {@code --failover-after 6s} and three image-engine agents at {@code --copy-bandwidth 4M}. A two-replica volume on A
 * and B, a full round to B; A's agent SIGKILLed and the volume failed over to B by the force-detach from A; a file
 * written through A's mount after it; 16 MiB and records written on B. A restarted is fenced, unstaged, follows B and
 * is killed once a quarter of its resync arrived: its image is its old image or B's point byte for byte; started again,
 * nothing is left in its {@code .tmp}, it gets its round, and a handoff to A serves exactly B's data.
 */
class ClusterFencedResyncKillTest {
    static final long MIB = 1L << 20;

    static ReplicaFixture f;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> f = new ReplicaFixture(dir, List.of("--copy-bandwidth", "4M"),
            List.of("--failover-after", "6s")));

    @Test
    void aFencedCopyKilledMidResyncKeepsItsOldImageOrTheNewPoint() throws Exception {
        String id = f.csi().createVolume(ReplicaFixture.replicated("fenced-kill", 2, 96 * MIB)).getVolume().getVolumeId();
        var tags = ReplicatedVolumeId.parse(id).orElseThrow().tags();
        String a = tags.get(0), b = tags.get(1);
        var agentA = f.cluster.agent(a);
        f.controllerPublish(a, id);
        Path onA = f.publish(a, id, f.stage(a, id));
        boolean aMounted = true;
        try {
            byte[] first = write(onA.resolve("first"), 8, 1);
            writeRecords(onA.resolve("records"), 0, 2000);
            var toB = f.round(b, a, id);
            System.out.printf("full round from %s to %s: %d bytes%n", a, b, toB.getBytesReceived());

            agentA.child.signal("KILL");                            // by its pid; its mounts stay in the kernel
            retrying(() -> f.csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id)
                    .setNodeId(a).build()), "the force-detach from the lost primary " + a);
            assertEquals("PRIMARY", role(b, id));
            write(onA.resolve("after-failover"), 4, 3);             // through A's mount: no point has it
            f.controllerPublish(b, id);
            Path onB = f.publish(b, id, f.stage(b, id));
            byte[] second;
            try {
                assertRecords(onB.resolve("records"), 2000);
                second = write(onB.resolve("second"), 16, 2);       // what A's image lacks: the resync's 16 MiB
                writeRecords(onB.resolve("records"), 2000, 2300);
            } finally {
                f.unpublishAndUnstage(b, id);
            }

            agentA.start();
            f.cluster.awaitEveryNode();
            awaitRole(a, id, "FENCED");
            Path imageA = f.dataDir(a).resolve("pool").resolve("volumes").resolve(id + ".img");
            f.unpublishAndUnstage(a, id);
            aMounted = false;
            // no loop device on it now: nothing writes it. Opened at once, so a rename over it (the round's commit, at
            // least 4 s of transfer away at 4 MiB/s) still leaves this read on the old file
            String oldImage = sha256(imageA);

            awaitMidResync(a, id);
            agentA.child.signal("KILL");
            String after = f.point(a, id);
            String now = sha256(imageA);
            Path pointOnB = after.isEmpty() ? null : f.dataDir(b).resolve("pool").resolve("snapshots").resolve(after + ".img");
            System.out.printf("%s killed mid-resync: its state names '%s', its image %s%n", a, after,
                    now.equals(oldImage) ? "the old image" : "another");
            if (after.isEmpty()) {
                assertEquals(oldImage, now, "no point recorded: the old image, byte for byte");
            } else {
                assertTrue(after.endsWith("-" + b), "a point " + b + " cut: " + after);
                if (Files.exists(pointOnB)) assertEquals(sha256(pointOnB), now, "the new point, byte for byte");
            }

            agentA.start();
            f.cluster.awaitEveryNode();
            assertEquals(List.of(), f.tmpFiles(a), "nothing left in " + a + "'s .tmp after its start");
            // its round again (the scheduler's, or this one; ABORTED while the scheduler's runs): a point of B's
            retrying(() -> f.round(a, b, id), "a round of " + a);
            assertEquals("SECONDARY", role(a, id));
            assertTrue(f.point(a, id).endsWith("-" + b), f.point(a, id));
            var lines = agentA.child.stderr().lines().filter(l -> l.contains("replica of " + id + " now holds point")).toList();
            System.out.printf("after the restart: %s%n", lines);
            if (after.isEmpty()) {
                assertTrue(lines.stream().anyMatch(l -> l.contains("(by checksums against its own image)")),
                        "the round after the kill is a resync against its image again: " + lines);
            }
            assertEquals(List.of(), f.tmpFiles(a));

            // a handoff to A: B's data exactly, none of A's writes after the failover
            f.csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(b).build());
            retrying(() -> f.controllerPublish(a, id), "the handoff to " + a);
            Path back = f.publish(a, id, f.stage(a, id));
            aMounted = true;
            assertRecords(back.resolve("records"), 2300);
            assertArrayEquals(first, sum(back.resolve("first")));
            assertArrayEquals(second, sum(back.resolve("second")));
            assertFalse(Files.exists(back.resolve("after-failover")), "A's write after the failover is discarded");
            f.unpublishAndUnstage(a, id);
            aMounted = false;
            f.csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(a).build());
            f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
            assertEquals(List.of(), ReplicaFixture.loops(id));
        } finally {
            if (agentA.child == null || !agentA.child.alive()) {
                agentA.start();
                f.cluster.awaitEveryNode();
            }
            if (aMounted) f.unpublishAndUnstage(a, id);
        }
    }

    /** Waits (bounded) until the node receives a round of the volume with 4 to 12 MiB of it arrived. */
    static void awaitMidResync(String node, String id) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String seen = "nothing";
        while (System.nanoTime() < deadline) {
            try {
                for (var copy : f.agent(node).withDeadlineAfter(5, TimeUnit.SECONDS).listCopies(ListCopiesRequest.getDefaultInstance()).getCopiesList()) {
                    seen = copy.getName() + " " + copy.getBytesDone() + "/" + copy.getBytesTotal();
                    if (copy.getIncoming() && copy.getName().contains(id) && copy.getBytesDone() >= 4 * MIB && copy.getBytesDone() <= 12 * MIB) {
                        System.out.printf("in the middle of the resync of %s on %s: %s%n", id, node, seen);
                        return;
                    }
                }
            } catch (StatusRuntimeException e) {
                // busy: ask again
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no resync of " + id + " seen in its middle on " + node + " within 60 s; last seen: " + seen
                + "\n" + f.cluster.agent(node).child.stderr().lines().filter(l -> l.contains(id) && !l.contains("call: ")).toList());
    }

    static String role(String node, String id) {
        return f.agent(node).getReplica(GetReplicaRequest.newBuilder().setVolumeId(id).build()).getRole();
    }

    static void awaitRole(String node, String id, String want) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                if (role(node, id).equals(want)) return;
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.UNAVAILABLE) throw e;
            }
            assertTrue(System.nanoTime() < deadline, node + " not " + want + " within 60 s");
            Thread.sleep(200);
        }
    }

    /** Calls {@code call} each second while it answers UNAVAILABLE or ABORTED, 120 s at most. */
    static void retrying(Runnable call, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            try {
                call.run();
                return;
            } catch (StatusRuntimeException e) {
                var code = e.getStatus().getCode();
                if ((code != Status.Code.UNAVAILABLE && code != Status.Code.ABORTED) || System.nanoTime() > deadline) {
                    throw new AssertionError(what + ": " + e.getStatus(), e);
                }
                Thread.sleep(1000);
            }
        }
    }
}
