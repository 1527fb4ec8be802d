package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterChecksumResyncKillTest.sha256;
import static io.csi4j.cli.cluster.ClusterChecksumResyncKillTest.write;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A fenced old primary killed in the middle of its resync by checksums against its own image keeps either its old
 * image or the new complete point (docs/replication.md, "Resync by checksums"), with real processes: a controller with
 * {@code --failover-after 6s} and two image-engine agents at {@code --copy-bandwidth 4M}. A two-replica volume on A
 * and B, a full round to B; A's agent SIGKILLed and the volume failed over to B by the force-detach from A; a file
 * written through A's mount after it; 16 MiB and records written on B. A restarted is fenced, unstaged, follows B and
 * is killed once a quarter of its resync arrived: its image is its old image or B's point byte for byte; started again,
 * nothing is left in its {@code .tmp}, it gets its round, and a handoff to A serves exactly B's data.
 */
class ClusterFencedResyncKillTest {
    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, 6, FailoverPair.NODES, "4M"));

    @Test
    void aFencedCopyKilledMidResyncKeepsItsOldImageOrTheNewPoint() throws Exception {
        try (var v = FencedRecipe.fullRoundToB(fx, "fenced-kill", onA -> write(onA.resolve("first"), 8, 1))) {
            String id = v.id, a = v.a, b = v.b;
            fx.failoverByForceDetach(a, b, id);
            write(v.onA.resolve("after-failover"), 4, 3);           // through A's mount: no point has it
            fx.controllerPublish(b, id);
            Path onB = v.stagedOnB();
            byte[] second = write(onB.resolve("second"), 16, 2);    // what A's image lacks: the resync's 16 MiB
            writeRecords(onB.resolve("records"), 2000, 2300);
            v.mounted.gone(b);

            v.restartedFencedThenUnstaged(60);
            fx.controllerUnpublish(a, id);
            // no loop device on it now: nothing writes it. Read at once, so a rename over it (the round's commit, at
            // least 4 s of transfer away at 4 MiB/s) still leaves this read on the old file
            Path imageA = KillMidCopy.image(fx, a, id);
            String oldImage = sha256(imageA);

            var killed = KillMidCopy.midResync(fx, a, id);
            String after = killed.point();
            String now = sha256(imageA);
            System.out.printf("%s killed mid-resync: its state names '%s', its image %s%n", a, after,
                    now.equals(oldImage) ? "the old image" : "another");
            if (after.isEmpty()) {
                assertEquals(oldImage, now, "no point recorded: the old image, byte for byte");
            } else {
                assertTrue(after.endsWith("-" + b), "a point " + b + " cut: " + after);
                KillMidCopy.assertImageIsPoint(fx, a, after, b, now);
            }

            KillMidCopy.restartedClean(fx, a);
            // its round again (the scheduler's, or this one; ABORTED while the scheduler's runs): a point of B's
            fx.retrying(() -> fx.round(a, b, id), "a round of " + a);
            assertEquals("SECONDARY", fx.replica(a, id).getRole());
            assertTrue(fx.point(a, id).endsWith("-" + b), fx.point(a, id));
            var lines = fx.cluster.agent(a).child.stderr().lines().filter(l -> l.contains("replica of " + id + " now holds point")).toList();
            System.out.printf("after the restart: %s%n", lines);
            if (after.isEmpty()) {
                assertTrue(lines.stream().anyMatch(l -> l.contains("(by checksums against its own image)")),
                        "the round after the kill is a resync against its image again: " + lines);
            }
            assertEquals(List.of(), fx.tmpFiles(a));

            // a handoff to A: B's data exactly, none of A's writes after the failover
            KillMidCopy.assertServes(v.handedBackToA(), 2300, v.data, second);
            v.deleted();
        }
    }
}
