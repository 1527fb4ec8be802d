package io.csi4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.cli.testing.Cli;
import io.csi4j.cli.testing.LivePlugin;
import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.proto.csi.CreateVolumeResponse;
import io.csi4j.proto.csi.ListVolumesResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code csi4j call METHOD JSON}: the replay line a sanity failure prints works as printed. */
class CallCommandTest {
    @TempDir
    static Path dir;
    static LivePlugin plugin;
    static Cli cli;

    @BeforeAll
    static void start() {
        plugin = LivePlugin.start(dir, EngineKind.DIR, false);
        cli = Cli.against(plugin.endpoint());
    }

    @AfterAll
    static void stop() {
        plugin.close();
    }

    @Test
    void sendsAnyUnaryRpcFromJson() {
        CreateVolumeResponse created = cli.json(CreateVolumeResponse.getDefaultInstance(), "call", "csi.v1.Controller/CreateVolume",
                "{\"name\":\"replayed\",\"capacityRange\":{\"requiredBytes\":\"8388608\"},\"volumeCapabilities\":[{\"mount\":{},"
                        + "\"accessMode\":{\"mode\":\"SINGLE_NODE_WRITER\"}}],\"secrets\":{\"token\":\"***\"}}",
                "--secret", "token=real");
        assertEquals(8L << 20, created.getVolume().getCapacityBytes());
        ListVolumesResponse listed = cli.json(ListVolumesResponse.getDefaultInstance(), "call", "ListVolumes", "{\"maxEntries\":10}");
        assertTrue(listed.getEntriesList().stream().anyMatch(e -> e.getVolume().getVolumeId().equals(created.getVolume().getVolumeId())));
    }

    @Test
    void aPluginErrorIsItsCodeAndMessage() {
        var r = cli.run("call", "csi.v1.Controller/ListSnapshots", "{\"maxEntries\":-1}");
        assertEquals(1, r.exit(), r::toString);
        assertTrue(r.err().startsWith("INVALID_ARGUMENT: "), r::toString);
    }

    @Test
    void namesTheRpcsItKnows() {
        var unknown = cli.run("call", "csi.v1.Controller/Nope");
        assertEquals(1, unknown.exit());
        assertTrue(unknown.err().contains("no unary RPC 'csi.v1.Controller/Nope'; one of: csi.v1.Identity/GetPluginInfo"), unknown::toString);
        var ambiguous = cli.run("call", "Probe");
        assertTrue(ambiguous.err().contains("'Probe' is ambiguous; one of: csi.v1.Identity/Probe, identity.Identity/Probe"), ambiguous::toString);
        var bad = cli.run("call", "ListVolumes", "{\"maxEntries\":\"many\"}");
        assertTrue(bad.err().startsWith("csi4j: not a csi.v1.ListVolumesRequest in JSON"), bad::toString);
    }
}
