package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Review 2026-11-27 s10, F2, with real processes (two image-engine agents over mutual TLS, a controller with
 * {@code --failover-after 8s}): a volume handed over A -> B at attach, B's agent then SIGKILLed before any round from
 * B (the node lost right after the move). The old primary A still names B as the successor of epoch 2, which made
 * every failover look like a handoff still running: ControllerPublishVolume on A was UNAVAILABLE for ever. Now it fails
 * over to A once B has been silent for the delay, and A serves every record written before the handoff (the writes B
 * took after it are the documented cost of a node loss).
 */
class ClusterFailoverAfterHandoffTest {
    static final int FAILOVER_AFTER_S = 8;

    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, FAILOVER_AFTER_S));

    @Test
    void theNewPrimaryLostRightAfterAHandoffIsFailedOverFromToTheOldOne() throws Exception {
        var volume = fx.createReplicated("fo-after-handoff");          // a day's interval: no round but the handoff's
        String id = volume.id(), a = volume.primary(), b = volume.secondary();
        var agentB = fx.cluster.agent(b);
        boolean aMounted = false;
        boolean bMounted = false;
        try {
            fx.controllerPublish(a, id);
            writeRecords(fx.stageAndPublish(a, id).resolve("records"), 0, 2000);
            aMounted = true;
            fx.unpublishAndUnstage(a, id);
            aMounted = false;
            fx.controllerUnpublish(a, id);

            fx.controllerPublish(b, id);                                    // the planned move: A demoted, B promoted at 2
            assertTrue(fx.state(a, id).contains("node-b") || fx.state(a, id).contains(b), "A names its successor: " + fx.state(a, id));
            Path onB = fx.stageAndPublish(b, id).resolve("records");
            bMounted = true;
            writeRecords(onB, 2000, 2500);                                 // after the handoff: lost with B's node

            agentB.child.signal("KILL");                                    // by its pid; its mounts stay in the kernel
            long killed = System.nanoTime();
            int unavailable = fx.publishRetryingWhileUnavailable(a, id);    // before the fix: UNAVAILABLE for ever
            long waited = (System.nanoTime() - killed) / 1_000_000;
            System.out.printf("failover of %s from %s (new primary, lost right after the handoff) back to %s: published %d ms after"
                    + " the kill, %d UNAVAILABLE answers first%n", id, b, a, waited, unavailable);
            assertTrue(waited >= (FAILOVER_AFTER_S - 1) * 1000L, "not failed over before the delay: " + waited + " ms");
            assertTrue(fx.state(a, id).contains("\"PRIMARY\"") && fx.state(a, id).contains("\"3\""), fx.state(a, id));

            Path back = fx.stageAndPublish(a, id);
            aMounted = true;
            assertRecords(back.resolve("records"), 2000);                   // every record of the handoff's final point
        } finally {
            if (agentB.child == null || !agentB.child.alive()) {
                agentB.start();
                fx.cluster.awaitEveryNode();
            }
            if (aMounted) fx.unpublishAndUnstage(a, id);
            if (bMounted) fx.unpublishAndUnstage(b, id);
        }
    }
}
