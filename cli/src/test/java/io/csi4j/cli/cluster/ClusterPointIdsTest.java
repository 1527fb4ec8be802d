package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.ListVolumesRequest;
import io.csi4j.proto.csi.TopologyRequirement;
import io.csi4j.proto.csi.VolumeContentSource;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A replication point's id through the cluster controller (docs/replication.md): a CreateVolume from it is NOT_FOUND
 * whether it would be made on the point's node or copied to another (ImportVolume), nothing is made, and the point
 * still serves replication's next round. Real processes: a controller and two image-engine agents over mutual TLS.
 */
class ClusterPointIdsTest {
    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, 8));

    @Test
    void aPointIdIsNoSnapshotToTheCoOnAnyNode() {
        var volume = fx.createReplicated("pointed");
        String id = volume.id(), a = volume.primary(), b = volume.secondary();
        String point = fx.round(b, a, id).getPoint();
        assertFalse(point.isEmpty(), "the round cut a point");
        try {
            for (String node : List.of(a, b)) {      // on the point's node (a restore), on the other (a copy between nodes)
                var refused = assertThrows(StatusRuntimeException.class, () -> fx.csi().createVolume(CreateVolumeRequest.newBuilder()
                        .setName("from-point-" + node).addVolumeCapabilities(ClusterReplicationTest.ext4())
                        .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(64L << 20))
                        .setVolumeContentSource(VolumeContentSource.newBuilder().setSnapshot(
                                VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(point)))
                        .setAccessibilityRequirements(TopologyRequirement.newBuilder().addRequisite(ClusterRoutingTest.on(node)))
                        .build()));
                assertEquals(Status.Code.NOT_FOUND, refused.getStatus().getCode(), "from the point to " + node + ": " + refused.getStatus());
            }
            assertEquals(List.of(id), fx.csi().listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesList().stream()
                    .map(e -> e.getVolume().getVolumeId()).toList(), "no volume made from the point");
            // replication's own use of the point is untouched: the next round is a delta against it
            assertEquals(point, fx.round(b, a, id).getBasePoint());
        } finally {                                    // the replicated volume, and anything a failed check made
            for (var e : fx.csi().listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesList()) {
                fx.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(e.getVolume().getVolumeId()).build());
            }
        }
    }
}
