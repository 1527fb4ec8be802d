package io.csi4j.cli.call;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.proto.csi.VolumeCapability.AccessMode.Mode;
import io.csi4j.sdk.server.Endpoint;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The flag parsing shared by the call commands. */
class ClientOptionsTest {

    @Test
    void addonsEndpointComesFromTheFlagTheAddonsVariableOrBesideCsiEndpoint() {
        var options = new ClientOptions();
        assertEquals(new Endpoint.Unix(Path.of("/run/x/csi-addons.sock")),
                options.addonsEndpoint(Map.of("CSI_ENDPOINT", "unix:///run/x/csi.sock")));
        assertEquals(new Endpoint.Unix(Path.of("/run/y/a.sock")),
                options.addonsEndpoint(Map.of("CSI_ENDPOINT", "unix:///run/x/csi.sock", "CSI_ADDONS_ENDPOINT", "/run/y/a.sock")));
        options.endpoint = "unix:///flag.sock";
        assertEquals(new Endpoint.Unix(Path.of("/flag.sock")), options.addonsEndpoint(Map.of("CSI_ADDONS_ENDPOINT", "/run/y/a.sock")));
        var none = new ClientOptions();
        var e = assertThrows(IllegalArgumentException.class, () -> none.addonsEndpoint(Map.of()));
        assertTrue(e.getMessage().contains("--endpoint"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> none.addonsEndpoint(Map.of("CSI_ENDPOINT", "tcp://127.0.0.1:1")));
    }

    @Test
    void capabilitiesParse() {
        VolumeCapability c = CapabilityConverter.parse("SINGLE_NODE_WRITER,mount,ext4,noatime,nodev");
        assertEquals(Mode.SINGLE_NODE_WRITER, c.getAccessMode().getMode());
        assertEquals("ext4", c.getMount().getFsType());
        assertEquals(java.util.List.of("noatime", "nodev"), c.getMount().getMountFlagsList());
        assertTrue(CapabilityConverter.parse("rwop,block").hasBlock());
        assertEquals(Mode.SINGLE_NODE_SINGLE_WRITER, CapabilityConverter.parse("rwop,block").getAccessMode().getMode());
        assertEquals(Mode.MULTI_NODE_READER_ONLY, CapabilityConverter.parse("multi_node_reader_only,mount").getAccessMode().getMode());
        assertEquals("", CapabilityConverter.parse("RWX,mount,,ro").getMount().getFsType());
        assertEquals(java.util.List.of("ro"), CapabilityConverter.parse("RWX,mount,,ro").getMount().getMountFlagsList());
        for (String bad : new String[] {"SINGLE_NODE_WRITER", "UNKNOWN,mount", "RWO,file", "RWO,block,ext4", "nope,mount"}) {
            assertThrows(IllegalArgumentException.class, () -> CapabilityConverter.parse(bad), bad);
        }
        assertEquals("1000", CapabilityConverter.withMountGroup(CapabilityConverter.parse("RWO,mount"), "1000").getMount().getVolumeMountGroup());
        assertThrows(IllegalArgumentException.class, () -> CapabilityConverter.withMountGroup(CapabilityConverter.parse("RWO,block"), "1"));
    }

    @Test
    void durationsParse() {
        assertEquals(Duration.ofMillis(500), DurationConverter.parse("500ms"));
        assertEquals(Duration.ofSeconds(30), DurationConverter.parse("30s"));
        assertEquals(Duration.ofSeconds(30), DurationConverter.parse("30"));
        assertEquals(Duration.ofMinutes(2), DurationConverter.parse("2m"));
        assertEquals(Duration.ofMillis(1500), DurationConverter.parse("1.5s"));
        assertEquals(Duration.ofHours(1), DurationConverter.parse("PT1H"));
        assertThrows(IllegalArgumentException.class, () -> DurationConverter.parse("soon"));
        assertThrows(picocli.CommandLine.TypeConversionException.class, () -> new DurationConverter().convert("0s"));
    }

    @Test
    void secretsComeFromFileAndFlagsTheFlagsWinning(@TempDir Path dir) throws Exception {
        Path lines = Files.writeString(dir.resolve("secrets.env"), "# a comment\nuser = admin\npassword=p=w\n\n");
        Path json = Files.writeString(dir.resolve("secrets.json"), "{\"user\": \"root\", \"token\": \"t\\u0041\"}");
        var options = new SecretOptions();
        options.file = lines;
        options.secrets.put("user", "flag");
        assertEquals(Map.of("user", "flag", "password", "p=w"), options.secrets());
        options.file = json;
        options.secrets.clear();
        assertEquals(Map.of("user", "root", "token", "tA"), options.secrets());
        Path bad = Files.writeString(dir.resolve("bad"), "just words\n");
        options.file = bad;
        assertThrows(IllegalArgumentException.class, options::secrets);
        Path notStrings = Files.writeString(dir.resolve("bad.json"), "{\"n\": 1}");
        options.file = notStrings;
        assertThrows(IllegalArgumentException.class, options::secrets);
    }

    @Test
    void pagingFollowsTokensAndStopsOnARepeatedOne() {
        var tokens = Map.of("", "t1", "t1", "t2", "t2", "");
        var calls = new java.util.ArrayList<String>();
        var pages = Paging.pages(null, true, t -> { calls.add(t); return t; }, tokens::get);
        assertEquals(java.util.List.of("", "t1", "t2"), calls);
        assertEquals(3, pages.size());
        assertEquals(java.util.List.of("t1"), Paging.pages("t1", false, t -> t, tokens::get));
        var loop = Map.of("", "same", "same", "same");
        var e = assertThrows(IllegalStateException.class, () -> Paging.pages("", true, t -> t, loop::get));
        assertTrue(e.getMessage().contains("'same' twice"), e.getMessage());
    }
}
