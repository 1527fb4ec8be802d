package io.csi4j.cli.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.VolumeCapability;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 29, {@code csi4j teardown}: a real {@code serve} with a pool image, a filesystem volume and a block volume
 * staged and published where a kubelet would (outside the data directory); serve stops, and teardown leaves no
 * mount and no loop device of the data directory anywhere, keeps the data, does nothing the second time, and with
 * {@code --delete-data} removes the directory. Beside a serving plugin it refuses.
 */
class TeardownTest {

    @Test
    void removesStagesPublishesPoolAndLoopsAfterServeStops(@TempDir Path tmp) throws Exception {
        Leaks.requireRoot();
        Path data = Files.createDirectories(tmp.resolve("data")).toRealPath();
        Path kubelet = Files.createDirectories(tmp.resolve("kubelet")).toRealPath();
        try {
            try (Plugin plugin = Plugin.start(data, "--pool-size", "1Gi")) {
                var rpc = new Rpc(plugin.channel(), null);
                VolumeCapability fs = capability(VolumeCapability.newBuilder()
                        .setMount(VolumeCapability.MountVolume.newBuilder().setFsType("ext4")));
                VolumeCapability block = capability(VolumeCapability.newBuilder().setBlock(VolumeCapability.BlockVolume.getDefaultInstance()));
                String fsId = create(rpc, "fs", fs);
                String blockId = create(rpc, "blk", block);
                Path fsStaging = Files.createDirectories(kubelet.resolve("fs/globalmount"));
                Path blockStaging = Files.createDirectories(kubelet.resolve("blk/staging"));
                rpc.node().nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(fsId)
                        .setStagingTargetPath(fsStaging.toString()).setVolumeCapability(fs).build());
                rpc.node().nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(fsId)
                        .setStagingTargetPath(fsStaging.toString()).setTargetPath(kubelet.resolve("pod-1/mount").toString())
                        .setVolumeCapability(fs).build());
                rpc.node().nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(blockId)
                        .setStagingTargetPath(blockStaging.toString()).setVolumeCapability(block).build());
                rpc.node().nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(blockId)
                        .setStagingTargetPath(blockStaging.toString()).setTargetPath(kubelet.resolve("pod-2/dev").toString())
                        .setVolumeCapability(block).build());
                Files.writeString(kubelet.resolve("pod-1/mount/kept.txt"), "kept");

                var refused = Plugin.run("teardown", "--data-dir", data.toString());
                assertEquals(2, refused.exit(), refused.toString());
                assertEquals("csi4j teardown: a plugin is serving on " + data.resolve("csi.sock") + "; stop it first (teardown "
                        + "removes the mounts and loop devices its volumes are served from)\n", refused.stderr());
                assertEquals(0, plugin.stop(30_000));
            }
            // what a stopped plugin leaves: the pool, the stage, the publishes, three loop devices
            assertEquals(4, Leaks.mountsUnder(tmp, null).size(), () -> "" + Leaks.mountsUnder(tmp, null));
            assertEquals(3, Leaks.loopsUnder(data).size(), () -> "" + Leaks.loopsUnder(data));

            var run = Plugin.run("teardown", "--data-dir", data.toString());
            assertEquals(0, run.exit(), () -> run.stdout() + run.stderr());
            assertEquals(List.of(), Leaks.mountsUnder(tmp, null), run.stdout());
            assertEquals(List.of(), Leaks.loopsUnder(data), run.stdout());
            assertTrue(run.stdout().contains("csi4j teardown: removed mount " + data.resolve("pool") + " (/dev/loop"), run.stdout());
            assertTrue(run.stdout().contains("csi4j teardown: removed mount " + kubelet.resolve("pod-1/mount") + " (/dev/loop"), run.stdout());
            assertTrue(run.stdout().endsWith("csi4j teardown: the data stays in " + data + " (--delete-data removes it)\n"), run.stdout());
            assertTrue(Files.isRegularFile(data.resolve("pool.img")) && Files.isRegularFile(data.resolve("catalog.db")));

            var again = Plugin.run("teardown", "--data-dir", data.toString());
            assertEquals(0, again.exit(), again.toString());
            assertEquals("csi4j teardown: nothing of " + data + " is mounted or attached\n"
                    + "csi4j teardown: the data stays in " + data + " (--delete-data removes it)\n", again.stdout());

            var delete = Plugin.run("teardown", "--data-dir", data.toString(), "--delete-data");
            assertEquals(0, delete.exit(), delete.toString());
            assertEquals("csi4j teardown: nothing of " + data + " is mounted or attached\ncsi4j teardown: deleted " + data + "\n",
                    delete.stdout());
            assertFalse(Files.exists(data));
        } finally {
            Leaks.cleanUp(tmp);
        }
    }

    private static VolumeCapability capability(VolumeCapability.Builder builder) {
        return builder.setAccessMode(VolumeCapability.AccessMode.newBuilder()
                .setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
    }

    private static String create(Rpc rpc, String name, VolumeCapability cap) {
        return rpc.controller().createVolume(CreateVolumeRequest.newBuilder().setName(name)
                .setCapacityRange(Rpc.atLeast(64L << 20)).addVolumeCapabilities(cap).build()).getVolume().getVolumeId();
    }
}
