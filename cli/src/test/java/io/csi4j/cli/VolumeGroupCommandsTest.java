package io.csi4j.cli;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.cli.testing.Cli;
import io.csi4j.cli.testing.LivePlugin;
import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.proto.addons.identity.Capability;
import io.csi4j.proto.addons.identity.GetCapabilitiesResponse;
import io.csi4j.proto.addons.identity.GetIdentityResponse;
import io.csi4j.proto.addons.identity.ProbeResponse;
import io.csi4j.proto.addons.volumegroup.*;
import io.csi4j.proto.csi.CreateVolumeResponse;
import io.csi4j.proto.csi.Volume;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** vg and addons commands against the driver's CSI-Addons services on their own socket. */
class VolumeGroupCommandsTest {
    @TempDir
    static Path dir;
    static LivePlugin plugin;
    static Cli csi;
    static Cli addons;

    @BeforeAll
    static void start() {
        plugin = LivePlugin.start(dir, EngineKind.DIR, true);
        csi = Cli.against(plugin.endpoint());
        addons = Cli.against(plugin.addonsEndpoint());
    }

    @AfterAll
    static void stop() {
        plugin.close();
    }

    static String volume(String name) {
        return csi.json(CreateVolumeResponse.getDefaultInstance(), "controller", "create-volume", name, "--required-bytes", "4Mi")
                .getVolume().getVolumeId();
    }

    static List<String> members(VolumeGroup g) {
        return g.getVolumesList().stream().map(Volume::getVolumeId).sorted().toList();
    }

    @Test
    void addonsIdentityCapsProbe() {
        GetIdentityResponse id = addons.json(GetIdentityResponse.getDefaultInstance(), "addons", "identity");
        assertEquals("local.csi4j.io", id.getName());
        assertTrue(addons.ok("addons", "identity").out().contains("vendor version:"));
        GetCapabilitiesResponse caps = addons.json(GetCapabilitiesResponse.getDefaultInstance(), "addons", "caps");
        assertTrue(caps.getCapabilitiesList().stream().anyMatch(c -> c.getVolumeGroup().getType() == Capability.VolumeGroup.Type.VOLUME_GROUP));
        var table = addons.ok("addons", "caps").out();
        assertTrue(table.contains("volume group") && table.contains("LIMIT_VOLUME_TO_ONE_VOLUME_GROUP"), table);
        assertTrue(addons.json(ProbeResponse.getDefaultInstance(), "addons", "probe").getReady().getValue());
        assertEquals("ready: true\n", addons.ok("addons", "probe").out());

        // the CSI socket does not serve CSI-Addons: the plugin's answer is printed as it is
        var wrong = csi.run("addons", "probe");
        assertEquals(1, wrong.exit());
        assertTrue(wrong.err().startsWith("UNIMPLEMENTED: "), wrong.err());
    }

    @Test
    void createModifyGetListDelete() {
        String a = volume("vg-a");
        String b = volume("vg-b");
        String c = volume("vg-c");

        CreateVolumeGroupResponse created = addons.json(CreateVolumeGroupResponse.getDefaultInstance(), "vg", "create", "group-one",
                "--volume-id", a, "--volume-id", b);
        String g = created.getVolumeGroup().getVolumeGroupId();
        assertEquals(List.of(a, b).stream().sorted().toList(), members(created.getVolumeGroup()));
        assertEquals(g, addons.json(CreateVolumeGroupResponse.getDefaultInstance(), "vg", "create", "group-one",
                "--volume-id", a, "--volume-id", b).getVolumeGroup().getVolumeGroupId(), "create is idempotent by name");

        ModifyVolumeGroupMembershipResponse modified = addons.json(ModifyVolumeGroupMembershipResponse.getDefaultInstance(),
                "vg", "modify", g, "--volume-id", b, "--volume-id", c);
        assertEquals(List.of(b, c).stream().sorted().toList(), members(modified.getVolumeGroup()));

        ControllerGetVolumeGroupResponse got = addons.json(ControllerGetVolumeGroupResponse.getDefaultInstance(), "vg", "get", g);
        assertEquals(members(modified.getVolumeGroup()), members(got.getVolumeGroup()));
        var table = addons.ok("vg", "get", g).out();
        assertTrue(table.contains("volume group id: " + g) && table.contains("MEMBER VOLUME") && table.contains(c), table);

        String second = addons.json(CreateVolumeGroupResponse.getDefaultInstance(), "vg", "create", "group-two")
                .getVolumeGroup().getVolumeGroupId();
        ListVolumeGroupsResponse page = addons.json(ListVolumeGroupsResponse.getDefaultInstance(), "vg", "list", "--max-entries", "1");
        assertEquals(1, page.getEntriesCount());
        assertFalse(page.getNextToken().isEmpty());
        ListVolumeGroupsResponse all = addons.json(ListVolumeGroupsResponse.getDefaultInstance(), "vg", "list", "--max-entries", "1", "--paging");
        assertEquals(List.of(g, second), all.getEntriesList().stream().map(e -> e.getVolumeGroup().getVolumeGroupId()).toList());
        assertTrue(addons.ok("vg", "list").out().startsWith("VOLUME GROUP ID"));

        var neither = addons.run("vg", "modify", g);
        assertEquals(1, neither.exit());
        assertTrue(neither.err().contains("--empty"), neither.err());
        assertEquals(0, addons.json(ModifyVolumeGroupMembershipResponse.getDefaultInstance(), "vg", "modify", g, "--empty")
                .getVolumeGroup().getVolumesCount());

        assertEquals("deleted volume group " + g + "\n", addons.ok("vg", "delete", g).out());
        addons.ok("vg", "delete", second);
        var gone = addons.run("vg", "get", g);
        assertEquals(1, gone.exit());
        assertTrue(gone.err().startsWith("NOT_FOUND: volume group " + g), gone.err());
        var badMember = addons.run("vg", "create", "group-three", "--volume-id", "vol-nothere-node-1");
        assertEquals(1, badMember.exit());
        assertTrue(badMember.err().startsWith("NOT_FOUND: "), badMember.err());
        for (String v : List.of(a, b, c)) csi.ok("controller", "delete-volume", v);
    }
}
