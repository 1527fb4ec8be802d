package io.csi4j.driver.csi;

import static io.csi4j.driver.csi.Wire.MIB;
import static io.csi4j.driver.csi.Wire.block;
import static io.csi4j.driver.csi.Wire.create;
import static io.csi4j.driver.csi.Wire.fails;
import static io.csi4j.driver.csi.Wire.stage;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.Tools;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import io.csi4j.proto.csi.ControllerModifyVolumeRequest;
import io.csi4j.proto.csi.GetPluginInfoRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.grpc.Status;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The {@code compression} mutable parameter, on an image pool that is a plain directory on a real
 * btrfs filesystem: set at CreateVolume or by ControllerModifyVolume, it is the image file's btrfs
 * property, and what the workload writes afterwards lands in compressed extents.
 */
@ExtendWith(LeakCheck.class)
class CompressionSocketTest {
    private static ScratchFilesystem btrfs;
    private static ServedDriver served;
    private Path nodeDir;

    @BeforeAll
    static void startPlugin() {
        ScratchFilesystem.require("btrfs");
        btrfs = ScratchFilesystem.create("btrfs", 1L << 30);
        try {
            served = ServedDriver.plainPool(btrfs.mountPoint().resolve("data"), EngineKind.IMAGE);
        } catch (RuntimeException e) {
            btrfs.close();
            throw e;
        }
    }

    @AfterAll
    static void stopPlugin() {
        try {
            if (served != null) served.close();
        } finally {
            if (btrfs != null) btrfs.close();
        }
    }

    @BeforeEach
    void nodeDir(TestInfo test) {
        nodeDir = served.nodeDir(test.getTestMethod().orElseThrow().getName());
    }

    @AfterEach
    void cleanUp() {
        assertEquals(List.of(), served.cleanUp(nodeDir), "the test left mounts or loop devices");
    }

    @Test
    void thePoolIsBtrfsWithReflinks() {
        var info = served.identity.getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
        assertEquals("btrfs", info.getManifestOrThrow("pool-filesystem"));
        assertEquals("yes", info.getManifestOrThrow("reflink"));
    }

    @Test
    void compressionAtCreateAndByModifyCompressesWhatIsWritten() throws Exception {
        String compressed = served.controller.createVolume(create("zstd", 32 * MIB, block())
                .putMutableParameters("compression", "zstd").build()).getVolume().getVolumeId();
        String plain = served.controller.createVolume(create("plain", 32 * MIB, block()).build()).getVolume().getVolumeId();
        assertEquals("zstd", compression(compressed));
        assertEquals("", compression(plain));

        writeCompressibleThroughTheDevice(compressed);
        writeCompressibleThroughTheDevice(plain);
        assertTrue(encodedExtents(compressed) > 0, "zstd: written data is in compressed extents");
        assertEquals(0, encodedExtents(plain), "no compression asked, none done");

        served.controller.controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(plain)
                .putMutableParameters("compression", "lzo").build());
        assertEquals("lzo", compression(plain));
        assertEquals(Map.of("compression", "lzo"), served.driver().catalog().volumes().byId(plain).orElseThrow().mutableParameters());
    }

    @Test
    void aBadValueAppliesNothing() throws Exception {
        String id = served.controller.createVolume(create("bad", 32 * MIB, block())
                .putMutableParameters("compression", "zstd").build()).getVolume().getVolumeId();
        Path staging = nodeDir.resolve("staging").resolve(id);
        served.node.nodeStageVolume(stage(id, staging, block()));
        LoopDevice loop = LoopDevice.findByBackingFile(served.image(id)).getFirst();
        long readAhead = ControllerSocketTest.readAheadKiB(loop);

        Status status = fails(Status.Code.INVALID_ARGUMENT, () -> served.controller.controllerModifyVolume(
                ControllerModifyVolumeRequest.newBuilder().setVolumeId(id)
                        .putMutableParameters("readAheadKiB", "4096").putMutableParameters("compression", "gzip").build()));
        assertTrue(status.getDescription().contains("gzip"), status.getDescription());
        assertEquals("zstd", compression(id));
        assertEquals(readAhead, ControllerSocketTest.readAheadKiB(loop), "the valid half was not applied either");
        assertEquals(Map.of("compression", "zstd"), served.driver().catalog().volumes().byId(id).orElseThrow().mutableParameters());

        fails(Status.Code.INVALID_ARGUMENT, () -> served.controller.createVolume(create("bad-create", 32 * MIB, block())
                .putMutableParameters("compression", "brotli").build()));
        assertFalse(served.driver().catalog().volumes().byName("bad-create").isPresent());
        served.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
    }

    /** Stages the block volume, writes 8 MiB of text through its loop device, syncs, unstages. */
    private void writeCompressibleThroughTheDevice(String id) throws Exception {
        Path staging = nodeDir.resolve("staging").resolve(id);
        served.node.nodeStageVolume(stage(id, staging, block()));
        Path device = LoopDevice.findByBackingFile(served.image(id)).getFirst().node();
        byte[] line = "the quick brown fox jumps over the lazy dog, again and again\n".getBytes(StandardCharsets.US_ASCII);
        ByteBuffer chunk = ByteBuffer.allocate(1 << 20);
        while (chunk.remaining() >= line.length) chunk.put(line);
        try (FileChannel ch = FileChannel.open(device, StandardOpenOption.WRITE)) {
            for (int i = 0; i < 8; i++) {
                chunk.rewind();
                ch.write(chunk, (long) i << 20);
            }
            ch.force(true);
        }
        served.node.nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
        Tools.run(Tools.DEFAULT_TIMEOUT, "sync", List.of("-f", served.image(id).toString()));
    }

    private static String compression(String id) {
        String out = Tools.run(Tools.DEFAULT_TIMEOUT, "btrfs", List.of("property", "get", served.image(id).toString(), "compression")).stdout();
        return out.strip().isEmpty() ? "" : out.strip().substring("compression=".length());
    }

    /** Extents FIEMAP reports as encoded (compressed) in the image file. */
    private static long encodedExtents(String id) {
        String out = Tools.run(Tools.DEFAULT_TIMEOUT, "filefrag", List.of("-v", served.image(id).toString())).stdout();
        return out.lines().filter(l -> l.contains("encoded")).count();
    }
}
