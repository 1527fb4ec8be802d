package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.csi.ControllerGetVolumeRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A volume's primary node forgotten while its other replica's node was silent too (review 2026-11-27 s9, F2; docs/replication.md,
 * "A node lost for good"), with real processes: forget-node cannot see the volume (no answering node lists a copy of it),
 * so it is accepted; when the secondary's node comes back its copy is there, and the volume must never be reported
 * NOT_FOUND (a CO takes that for gone): UNAVAILABLE naming the forgotten node and the copies.
 */
class ClusterForgottenPrimaryTest {
    private static final Duration FAILOVER_AFTER = Duration.ofSeconds(8);
    static ReplicaFixture f;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> f = new ReplicaFixture(dir, List.of(),
            List.of("--failover-after", FAILOVER_AFTER.toSeconds() + "s")));

    static StatusRuntimeException getVolume(String id) {
        return assertThrows(StatusRuntimeException.class, () -> f.csi().controllerGetVolume(
                ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build()));
    }

    @Test
    void aVolumeWhosePrimaryNodeWasForgottenIsNeverNotFoundWhileACopyAnswers() throws Exception {
        String id = f.csi().createVolume(ReplicaFixture.replicated("forgotten-primary", 2, 64 * ReplicaFixture.MIB)).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0), b = parsed.tags().get(1);
        f.round(b, a, id);                                   // b holds a complete point
        var agentA = f.cluster.agent(a);
        var agentB = f.cluster.agent(b);
        agentA.child.kill();
        agentB.child.kill();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            ClusterStatusTest.Run forgot;
            while ((forgot = f.cli("cluster", "forget-node", a)).exit() != 0) {
                assertTrue(forgot.err().startsWith("FAILED_PRECONDITION: node '" + a + "' "), forgot.err());
                assertTrue(System.nanoTime() < deadline, "forget-node never accepted: " + forgot.err());
                Thread.sleep(500);
            }
        } finally {
            agentB.start();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        StatusRuntimeException e;
        while (!(e = getVolume(id)).getStatus().getDescription().contains("forgotten node(s) [" + a + "]")) {
            assertNotEquals(Status.Code.NOT_FOUND, e.getStatus().getCode(), "a volume with a copy is never NOT_FOUND: " + e);
            assertTrue(System.nanoTime() < deadline, "never answered for " + b + "'s copy: " + e);
            Thread.sleep(250);
        }
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.toString());
        assertTrue(e.getStatus().getDescription().contains("copies on [" + b + "]"), e.toString());
        System.out.printf("%s after forget-node %s with %s silent, %s back: %s%n", id, a, b, b, e.getStatus());
    }
}
