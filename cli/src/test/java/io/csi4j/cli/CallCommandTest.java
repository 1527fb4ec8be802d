package io.csi4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.cli.testing.Cli;
import io.csi4j.cli.testing.LivePlugin;
import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.proto.csi.CreateVolumeResponse;
import io.csi4j.proto.csi.ListVolumesResponse;
import java.nio.file.Path;
import java.util.List;
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
        assertTrue(unknown.err().startsWith("csi4j: no unary RPC 'csi.v1.Controller/Nope'; the RPCs csi4j knows:\n"
                + "  csi.v1.Identity/GetPluginInfo\n  csi.v1.Identity/GetPluginCapabilities\n"), unknown::toString);
        for (String served : List.of("csi.v1.Controller/ListVolumes", "reclaimspace.ReclaimSpaceController/ControllerReclaimSpace",
                "reclaimspace.ReclaimSpaceNode/NodeReclaimSpace", "volumegroup.Controller/CreateVolumeGroup",
                "csi4j.cluster.v1.ClusterStatus/GetClusterStatus")) {
            assertTrue(unknown.err().contains("\n  " + served + "\n"), served + " is not listed:\n" + unknown.err());
        }
        assertEquals(unknown.err().lines().count() - 1, unknown.err().lines().filter(l -> l.startsWith("  ")).count(),
                "one RPC per line after the first:\n" + unknown.err());

        var typo = cli.run("call", "csi.v1.Controller/CreateVolum");
        assertTrue(typo.err().startsWith("csi4j: no unary RPC 'csi.v1.Controller/CreateVolum'; did you mean "
                + "csi.v1.Controller/CreateVolume? The RPCs csi4j knows:\n"), typo::toString);
        var bare = cli.run("call", "listvolume");
        assertTrue(bare.err().startsWith("csi4j: no unary RPC 'listvolume'; did you mean csi.v1.Controller/ListVolumes?"), bare::toString);

        var ambiguous = cli.run("call", "Probe");
        assertEquals("csi4j: 'Probe' is ambiguous; one of:\n  csi.v1.Identity/Probe\n  identity.Identity/Probe\n", ambiguous.err());
        var bad = cli.run("call", "ListVolumes", "{\"maxEntries\":\"many\"}");
        assertTrue(bad.err().startsWith("csi4j: not a csi.v1.ListVolumesRequest in JSON"), bad::toString);
    }

    @Test
    void malformedJsonIsOneReadableLine() {
        var truncated = cli.run("call", "ListVolumes", "{\"maxEntries\":");
        assertEquals(1, truncated.exit(), truncated::toString);
        assertEquals("csi4j: not a csi.v1.ListVolumesRequest in JSON: it ends before the request is complete "
                + "(End of input at line 1 column 15 path $.maxEntries)\n", truncated.err());
        for (String json : List.of("{", "not json", "{maxEntries:2}", "{\"maxEntries\":2}}", "[1]", "{\"maxEntries\":1,\"maxEntries\":2}")) {
            var r = cli.run("call", "ListVolumes", json);
            assertEquals(1, r.exit(), () -> json + "\n" + r);
            assertEquals(1, r.err().lines().count(), r::toString);
            assertTrue(r.err().startsWith("csi4j: not a csi.v1.ListVolumesRequest in JSON: "), r::toString);
            assertFalse(r.err().contains("Exception") || r.err().contains("JsonReader"), r::toString);
        }
    }
}
