package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.cli.testing.Cli;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.CreateVolumeResponse;
import io.csi4j.proto.csi.TopologyRequirement;
import io.csi4j.proto.csi.VolumeCapability;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 29: a CLI restore onto another node shows the copy's progress (read from the controller's cluster status,
 * where the agents track each copy by the volume's name) and waits as long as the copy advances: each time the call's
 * --timeout passes while the copy goes on, it says so and calls again, which joins the copy. Copies are bounded to
 * 4 MiB/s, so 24 MiB take several 2 s deadlines.
 */
class CliCopyProgressTest {
    static final long MIB = 1L << 20;

    @Test
    void aRestoreOntoAnotherNodeShowsProgressAndWaitsPastItsDeadline(@TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        try (LocalCluster cluster = LocalCluster.start(tmp, List.of("node-a", "node-b"), EngineKind.IMAGE, OptionalLong.of(1L << 30), 4.0, 4 * MIB)) {
            var controller = ControllerGrpc.newBlockingStub(cluster.controllerChannel());
            VolumeCapability block = VolumeCapability.newBuilder().setBlock(VolumeCapability.BlockVolume.getDefaultInstance())
                    .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
            String source = controller.createVolume(CreateVolumeRequest.newBuilder().setName("source").addVolumeCapabilities(block)
                    .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(64 * MIB))
                    .setAccessibilityRequirements(TopologyRequirement.newBuilder().addRequisite(ClusterRoutingTest.on("node-a")))
                    .build()).getVolume().getVolumeId();
            Path sourceImage = image(cluster, source);
            byte[] data = new byte[(int) MIB];
            new Random(29).nextBytes(data);
            try (var ch = FileChannel.open(sourceImage, StandardOpenOption.WRITE)) {
                for (long at = 0; at < 24 * MIB; at += MIB) ch.write(ByteBuffer.wrap(data), at);
                ch.force(true);
            }
            String snapshot = controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("snap").setSourceVolumeId(source).build())
                    .getSnapshot().getSnapshotId();

            var run = Cli.against(cluster.controllerSocket()).run("controller", "create-volume", "restored", "--snapshot-id", snapshot,
                    "--cap", "SINGLE_NODE_WRITER,block", "--required-bytes", "64Mi", "--topology", "topology.csi4j.io/node=node-b",
                    "--timeout", "2s", "-o", "json");
            assertEquals(0, run.exit(), run::toString);
            var builder = CreateVolumeResponse.newBuilder();
            com.google.protobuf.util.JsonFormat.parser().merge(run.out(), builder);
            String restored = builder.getVolume().getVolumeId();
            assertTrue(restored.endsWith("-node-b"), restored);

            String amounts = "[0-9]+(B|\\.[0-9](Ki|Mi)) of 24\\.0Mi, [0-9]+%";
            String progress = "csi4j: copying " + snapshot + " from node-a to node-b: " + amounts;
            String again = "csi4j: no answer within --timeout 2s and the copy goes on \\(" + amounts + "\\): calling again, which joins it";
            List<String> lines = run.err().lines().toList();
            for (String line : lines) assertTrue(line.matches(progress) || line.matches(again), line + "\n" + run.err());
            assertTrue(lines.stream().anyMatch(l -> l.matches(progress)), run.err());
            assertTrue(lines.stream().anyMatch(l -> l.matches(again)), run.err());

            byte[] expected = Files.readAllBytes(sourceImage);
            assertArrayEquals(expected, Files.readAllBytes(image(cluster, restored)), "the restored volume holds the snapshot's data");
        }
    }

    private static Path image(LocalCluster cluster, String volumeId) {
        String node = volumeId.endsWith("-node-a") ? "node-a" : "node-b";
        return cluster.nodes.get(node).dataDir().resolve("pool").resolve("volumes").resolve(volumeId + ".img");
    }
}
