package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterRoutingTest.createOn;
import static io.csi4j.cli.cluster.ClusterRoutingTest.fails;
import static io.csi4j.cli.cluster.ClusterRoutingTest.on;
import static io.csi4j.cli.cluster.ClusterRoutingTest.volume;
import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.csi.*;
import io.grpc.Status;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A node agent that stops answering: calls that need it fail UNAVAILABLE naming it; the other nodes go on. */
class ClusterAgentDownTest {

    @Test
    void aStoppedAgentIsNamedAndTheOthersStillServe(@TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        try (var cluster = LocalCluster.start(tmp, List.of("node-a", "node-b"))) {
            var controller = ControllerGrpc.newBlockingStub(cluster.controllerChannel());
            Volume onB = createOn(controller, "before-stop", "node-b");
            cluster.stop("node-b");

            var get = fails(Status.Code.UNAVAILABLE, () -> controller.controllerGetVolume(ControllerGetVolumeRequest.newBuilder()
                    .setVolumeId(onB.getVolumeId()).build()));
            assertTrue(get.getStatus().getDescription().contains("node 'node-b'"), get.getStatus().getDescription());
            var list = fails(Status.Code.UNAVAILABLE, () -> controller.listVolumes(ListVolumesRequest.getDefaultInstance()));
            assertTrue(list.getStatus().getDescription().contains("node-b"), list.getStatus().getDescription());
            var create = fails(Status.Code.UNAVAILABLE, () -> createOn(controller, "needs-b", "node-b"));
            assertTrue(create.getStatus().getDescription().contains("node-b"), create.getStatus().getDescription());
            var capacity = fails(Status.Code.UNAVAILABLE, () -> controller.getCapacity(GetCapacityRequest.getDefaultInstance()));
            assertTrue(capacity.getStatus().getDescription().contains("node-b"), capacity.getStatus().getDescription());

            // node a is not affected; without requirements a volume goes to a node that answers
            assertTrue(createOn(controller, "still-on-a", "node-a").getVolumeId().endsWith("-node-a"));
            assertTrue(controller.createVolume(volume("anywhere").build()).getVolume().getVolumeId().endsWith("-node-a"));
            assertTrue(controller.getCapacity(GetCapacityRequest.newBuilder().setAccessibleTopology(on("node-a")).build())
                    .getAvailableCapacity() > 0);
        }
    }
}
