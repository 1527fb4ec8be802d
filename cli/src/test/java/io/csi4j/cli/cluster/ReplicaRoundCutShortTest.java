package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterMobilityTest.digest;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.cli.reliability.PowerCut;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.cluster.NodeAgentGrpc;
import io.csi4j.proto.cluster.PeerAgent;
import io.csi4j.proto.cluster.SyncReplicaRequest;
import io.csi4j.proto.cluster.SyncReplicaResponse;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.proto.csi.TopologyRequirement;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The regression test of docs/power-cut.md finding 5, deterministic: a replication round's commit keeps the new
 * point's replica (the old one dropped), renames the new image over the volume's, then records the point. A power
 * cut between them (found by {@link PowerCutReplicationTest}) left the secondary's state naming the old point, with
 * only the new point's replica kept and the image either point: the state and the image disagreed, and the next round
 * was a full copy (the primary drops the points the secondary does not name). Here the two windows are made by hand
 * on a stopped secondary, from a completed round: the state file put back as it was before the round (the rename
 * reached the disk, the state did not), and the state and the image both put back (neither did). The agent must
 * finish the round at its start: its state names the new point, its image is that point's replica byte for byte,
 * and its next round is a delta from it.
 */
class ReplicaRoundCutShortTest {
    @TempDir
    Path tmp;

    @Test
    void aRoundCutShortAfterItsReplicaIsFinishedAtStartUp() throws Exception {
        Privileged.requireRoot();
        var flags = List.of("--engine", "image", "--pool-size", "1G");
        try (var cluster = ProcessCluster.start(tmp, List.of("node-a", "node-b"), flags, List.of())) {
            var controller = ControllerGrpc.newBlockingStub(cluster.controllerChannel()).withDeadlineAfter(120, TimeUnit.SECONDS);
            String id = controller.createVolume(ClusterReplicationTest.replicated("cut-short", 2, "24h")
                    .setAccessibilityRequirements(TopologyRequirement.newBuilder().addPreferred(ClusterRoutingTest.on("node-a"))).build())
                    .getVolume().getVolumeId();
            assertEquals(List.of("node-a", "node-b"), ReplicatedVolumeId.parse(id).orElseThrow().tags());
            controller.controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId("node-a")
                    .setVolumeCapability(ClusterReplicationTest.ext4()).build());
            ManagedChannel nodeChannel = Channels.connect(Endpoint.parse("unix://" + tmp.resolve("node-a/csi.sock")));
            var node = NodeGrpc.newBlockingStub(nodeChannel).withDeadlineAfter(120, TimeUnit.SECONDS);
            Path staging = Files.createDirectories(tmp.resolve("staging"));
            Path target = tmp.resolve("target");
            node.nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                    .setVolumeCapability(ClusterReplicationTest.ext4()).build());
            node.nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                    .setTargetPath(target.toString()).setVolumeCapability(ClusterReplicationTest.ext4()).build());
            try {
                everyWindow(cluster, id, target.resolve("records"));
            } finally {   // also when a check failed: nothing left mounted
                node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target.toString()).build());
                node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
                nodeChannel.shutdownNow();
            }
            controller.controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId("node-a").build());
            controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        }
    }

    /** Both windows in turn, each from a completed round: the state put back, then the state and the image. */
    private void everyWindow(ProcessCluster cluster, String id, Path records) throws Exception {
        Path b = tmp.resolve("node-b");
        Path state = b.resolve("replication").resolve(id + ".json");
        Path image = b.resolve("pool/volumes").resolve(id + ".img");

        ClusterReplicationTest.writeRecords(records, 0, 500);
        round(cluster, id);
        int written = 500;
        for (boolean imageToo : List.of(false, true)) {
            String before = point(state);
            byte[] stateBefore = Files.readAllBytes(state);
            Path imageBefore = tmp.resolve("image-before.img");
            PowerCut.run("cp", "--reflink=auto", image.toString(), imageBefore.toString());
            ClusterReplicationTest.writeRecords(records, written, written + 500);
            written += 500;
            String next = round(cluster, id).getPoint();
            assertNotEquals(before, next);

            // the cut, by hand: node-b stopped, its state (and its image) as the round's commit had not reached the disk
            var agent = cluster.agent("node-b");
            agent.child.kill();                       // a crash: the pool stays mounted
            Files.write(state, stateBefore);
            if (imageToo) Files.move(imageBefore, image, StandardCopyOption.REPLACE_EXISTING);
            else Files.delete(imageBefore);
            String what = imageToo ? "state and image as before the round" : "state as before the round";
            assertEquals(before, point(state), what);
            agent.start();
            cluster.awaitEveryNode();

            assertEquals(next, point(state), what + ": the round is not finished at start-up\n" + agent.child.stderr());
            Path replica = b.resolve("pool/replicas").resolve(id + "@" + next + ".img");
            assertTrue(Arrays.equals(digest(replica), digest(image)), what + ": the image is not the point its state names");
            var resumed = round(cluster, id);
            assertEquals(next, resumed.getBasePoint(), what + ": the next round is not a delta from the finished point: " + resumed);
        }
    }

    private static SyncReplicaResponse round(ProcessCluster cluster, String id) {
        ManagedChannel channel = Channels.builder(new Endpoint.Tcp("127.0.0.1", cluster.agent("node-b").port), cluster.controllerTls,
                "127.0.0.1").build();
        try {
            var from = PeerAgent.newBuilder().setNodeId("node-a").setAddress(cluster.agent("node-a").address()).setAuthority("127.0.0.1").build();
            return NodeAgentGrpc.newBlockingStub(channel).withDeadlineAfter(120, TimeUnit.SECONDS)
                    .syncReplica(SyncReplicaRequest.newBuilder().setVolumeId(id).setPrimary(from).build());
        } finally {
            channel.shutdownNow();
        }
    }

    private static String point(Path state) throws Exception {
        var m = Pattern.compile("\"point\"\\s*:\\s*\"([^\"]*)\"").matcher(Files.readString(state));
        return m.find() ? m.group(1) : "";
    }
}
