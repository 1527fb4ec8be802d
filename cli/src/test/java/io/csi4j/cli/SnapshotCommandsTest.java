package io.csi4j.cli;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.cli.testing.Cli;
import io.csi4j.cli.testing.LivePlugin;
import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.proto.csi.*;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code csi4j snapshot allocated|delta} against the real driver (image engine, its data directory as the pool)
 * on a real UNIX socket: the table and the json lines, and that only the image engine advertises the service.
 * Data is written straight into the volume's image: what is printed is under test here, not the loop device.
 */
class SnapshotCommandsTest {
    @TempDir
    static Path dir;
    static LivePlugin plugin;
    static Cli cli;

    @BeforeAll
    static void start() {
        plugin = LivePlugin.start(dir, EngineKind.IMAGE, false);
        cli = Cli.against(plugin.endpoint());
    }

    @AfterAll
    static void stop() {
        plugin.close();
    }

    private static Path image(String kind, String id) {
        return plugin.driver().engine().pool().path().resolve(kind).resolve(id + ".img");
    }

    private static void write(String volumeId, long offset, int length, int value) throws IOException {
        try (var f = new RandomAccessFile(image("volumes", volumeId).toFile(), "rw")) {
            byte[] data = new byte[length];
            java.util.Arrays.fill(data, (byte) value);
            f.seek(offset);
            f.write(data);
        }
    }

    @Test
    void allocatedAndDeltaPrintTheRanges() throws IOException {
        String volume = cli.json(CreateVolumeResponse.getDefaultInstance(), "controller", "create-volume", "cbt",
                "--required-bytes", "16Mi", "--cap", "RWO,block").getVolume().getVolumeId();
        write(volume, 0, 8192, 1);
        write(volume, 4 << 20, 4096, 2);
        String a = cli.json(CreateSnapshotResponse.getDefaultInstance(), "controller", "create-snapshot", "cbt-a",
                "--source-volume-id", volume).getSnapshot().getSnapshotId();
        write(volume, 4 << 20, 4096, 3);
        write(volume, 8 << 20, 1 << 20, 4);
        String b = cli.json(CreateSnapshotResponse.getDefaultInstance(), "controller", "create-snapshot", "cbt-b",
                "--source-volume-id", volume).getSnapshot().getSnapshotId();

        String table = cli.ok("snapshot", "allocated", a).out();
        assertEquals(List.of("OFFSET           LENGTH           END",
                "0                8192             8192",
                "4194304          4096             4198400",
                "2 ranges, 12Ki allocated of a 16Mi volume"), table.lines().toList(), table);

        String delta = cli.ok("snapshot", "delta", a, b).out();
        assertEquals(List.of("OFFSET           LENGTH           END",
                "4194304          4096             4198400",
                "8388608          1048576          9437184",
                "2 ranges, 1028Ki changed of a 16Mi volume"), delta.lines().toList(), delta);

        // json: one pretty document per response message, one after the other; one range a message with --max-results 1
        String json = cli.ok("snapshot", "delta", a, b, "--max-results", "1", "-o", "json").out();
        assertTrue(json.startsWith("{\n  \"block_metadata_type\": \"VARIABLE_LENGTH\",\n"), json);
        var documents = new java.util.ArrayList<String>();
        new com.google.gson.JsonStreamParser(json).forEachRemaining(d -> documents.add(d.toString()));
        assertEquals(2, documents.size(), json);
        var second = GetMetadataDeltaResponse.newBuilder();
        com.google.protobuf.util.JsonFormat.parser().merge(documents.get(1), second);
        assertEquals(BlockMetadataType.VARIABLE_LENGTH, second.getBlockMetadataType());
        assertEquals(16L << 20, second.getVolumeCapacityBytes());
        assertEquals(List.of(BlockMetadata.newBuilder().setByteOffset(8 << 20).setSizeBytes(1 << 20).build()), second.getBlockMetadataList());

        // allocated -o json is pretty too (issue 29: it printed one line)
        String allocatedJson = cli.ok("snapshot", "allocated", a, "-o", "json").out();
        assertTrue(allocatedJson.startsWith("{\n  \"block_metadata_type\": \"VARIABLE_LENGTH\",\n"), allocatedJson);

        // resume from the middle of the first range
        String resumed = cli.ok("snapshot", "allocated", a, "--starting-offset", "4096").out();
        assertTrue(resumed.lines().anyMatch(l -> l.equals("4096             4096             8192")), resumed);

        var missing = cli.run("snapshot", "allocated", "snap-nosuch");
        assertNotEquals(0, missing.exit());
        assertTrue(missing.err().contains("NOT_FOUND"), missing.toString());
        var past = cli.run("snapshot", "delta", a, b, "--starting-offset", String.valueOf((16 << 20) + 1));
        assertTrue(past.err().contains("OUT_OF_RANGE"), past.toString());
    }

    @Test
    void onlyTheImageEngineAdvertisesSnapshotMetadata(@TempDir Path other) {
        var image = cli.json(GetPluginCapabilitiesResponse.getDefaultInstance(), "identity", "caps");
        assertTrue(image.getCapabilitiesList().stream()
                .anyMatch(c -> c.getService().getType() == PluginCapability.Service.Type.SNAPSHOT_METADATA_SERVICE));
        try (var dirPlugin = LivePlugin.start(other, EngineKind.DIR, false)) {
            var caps = Cli.against(dirPlugin.endpoint()).json(GetPluginCapabilitiesResponse.getDefaultInstance(), "identity", "caps");
            assertFalse(caps.getCapabilitiesList().stream()
                    .anyMatch(c -> c.getService().getType() == PluginCapability.Service.Type.SNAPSHOT_METADATA_SERVICE));
            var refused = Cli.against(dirPlugin.endpoint()).run("snapshot", "allocated", "snap-x");
            assertTrue(refused.err().contains("UNIMPLEMENTED"), refused.toString());
        }
    }
}
