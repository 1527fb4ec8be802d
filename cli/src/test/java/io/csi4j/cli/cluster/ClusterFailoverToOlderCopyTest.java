package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A ControllerPublishVolume that fails over to its own node refuses when that node's copy is older than another
 * answering copy's (issue 28, docs/replication.md "Which copy a failover picks"), with real processes: a controller with
 * {@code --failover-after 6s}, three image-engine agents over mutual TLS. A three-replica volume: records 0..1999 and a
 * round to C, records ..2299 and a round to B; A's agent SIGKILLed. The publish on C waits out the delay (UNAVAILABLE),
 * then is FAILED_PRECONDITION naming B, and nothing changed on any copy (before, C was promoted and the 300 records B
 * held were lost with B's first round from C). The publish on B then fails over to B, which serves all 2300.
 */
class ClusterFailoverToOlderCopyTest {
    static final int FAILOVER_AFTER_S = 6;

    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, FAILOVER_AFTER_S,
            List.of("node-a", "node-b", "node-c")));

    @Test
    void aPublishOnACopyOlderThanAnotherAnsweringOneIsRefusedNamingIt() throws Exception {
        var v = ThreeCopies.withFullRoundsToCThenB(fx, "fo-older", onA -> null, onA -> null);
        try {
            var heldByC = fx.replica(v.c(), v.id());
            var heldByB = fx.replica(v.b(), v.id());
            fx.cluster.agent(v.a()).child.signal("KILL");                    // by its pid; its mounts stay in the kernel
            long killed = System.nanoTime();
            var refused = assertThrows(StatusRuntimeException.class, () -> fx.publishRetryingWhileUnavailable(v.c(), v.id()));
            long waited = (System.nanoTime() - killed) / 1_000_000;
            System.out.printf("publish of %s on %s (older point) refused %d ms after the kill: %s%n", v.id(), v.c(), waited, refused.getStatus());
            assertEquals(Status.Code.FAILED_PRECONDITION, refused.getStatus().getCode(), refused.getStatus().toString());
            assertTrue(refused.getStatus().getDescription().contains("'" + v.b() + "'"), "names the fresher copy: " + refused.getStatus());
            assertTrue(waited >= (FAILOVER_AFTER_S - 1) * 1000L, "refused once the failover was due, not before: " + waited + " ms");
            // refused before any reservation: neither copy learnt an epoch, neither was promoted
            assertEquals(heldByC, fx.replica(v.c(), v.id()));
            assertEquals(heldByB, fx.replica(v.b(), v.id()));

            fx.publishRetryingWhileUnavailable(v.b(), v.id());
            assertEquals("PRIMARY", fx.replica(v.b(), v.id()).getRole());
            assertEquals(2, fx.replica(v.b(), v.id()).getEpoch());
            Path onB = fx.stageAndPublish(v.b(), v.id());
            try {
                assertRecords(onB.resolve("records"), ThreeCopies.RECORDS);  // every record of B's point
            } finally {
                fx.unpublishAndUnstage(v.b(), v.id());
            }
        } finally {
            v.cleanUp();
        }
    }
}
