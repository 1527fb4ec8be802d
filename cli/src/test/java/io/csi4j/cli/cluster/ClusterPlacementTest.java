package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.proto.csi.*;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Without accessibility requirements a volume goes to the node with the most free capacity, not the first one,
 * and a retry of the same name to the node that made it.
 */
class ClusterPlacementTest {

    @Test
    void withoutRequirementsTheNodeWithTheMostFreeCapacityWins(@TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        // node-b starts first and so gets the 2 GiB pool, node-a 1 GiB: node-a sorts first, node-b has more room
        try (var cluster = LocalCluster.start(tmp, List.of("node-b", "node-a"), EngineKind.IMAGE, OptionalLong.of(2L << 30))) {
            var controller = ControllerGrpc.newBlockingStub(cluster.controllerChannel());
            long a = capacity(controller, "node-a");
            long b = capacity(controller, "node-b");
            assertTrue(b > a, "node-b " + b + " > node-a " + a);
            Volume v = controller.createVolume(ClusterRoutingTest.volume("roomiest").build()).getVolume();
            assertTrue(v.getVolumeId().endsWith("-node-b"), v.getVolumeId());
            assertEquals(List.of(ClusterRoutingTest.on("node-b")), v.getAccessibleTopologyList());
            long sum = controller.getCapacity(GetCapacityRequest.newBuilder()
                    .addVolumeCapabilities(ClusterRoutingTest.volume("x").getVolumeCapabilities(0)).build()).getAvailableCapacity();
            assertEquals(a + b, sum, (a + b) / 100.0, "without a segment: the sum of the nodes (less the volume just made)");

            // node-b fills up: node-a now has more room, yet a retry of the same name answers the same volume
            Volume big = controller.createVolume(ClusterRoutingTest.volume("filler")
                    .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(1536L << 20))
                    .setAccessibilityRequirements(TopologyRequirement.newBuilder().addRequisite(ClusterRoutingTest.on("node-b"))).build()).getVolume();
            assertTrue(capacity(controller, "node-a") > capacity(controller, "node-b"), "node-a has more room now");
            assertEquals(v.getVolumeId(), controller.createVolume(ClusterRoutingTest.volume("roomiest").build()).getVolume().getVolumeId(),
                    "a retried CreateVolume goes back to the node that made it");
            assertTrue(controller.createVolume(ClusterRoutingTest.volume("next").build()).getVolume().getVolumeId().endsWith("-node-a"));
            for (Volume done : List.of(v, big)) controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(done.getVolumeId()).build());
        }
    }

    private static long capacity(ControllerGrpc.ControllerBlockingStub controller, String node) {
        return controller.getCapacity(GetCapacityRequest.newBuilder()
                .addVolumeCapabilities(ClusterRoutingTest.volume("x").getVolumeCapabilities(0))
                .setAccessibleTopology(ClusterRoutingTest.on(node)).build()).getAvailableCapacity();
    }
}
