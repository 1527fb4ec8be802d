package io.csi4j.cli;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.cli.testing.Cli;
import io.csi4j.cli.testing.LivePlugin;
import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.proto.csi.*;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Identity, Controller and GroupController commands against the real driver (dir engine, which needs no
 * loop devices) on a real UNIX socket: what they print, that -o json parses back into the response, and
 * that the plugin really did what the command said.
 */
class ControllerCommandsTest {
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

    static String createVolume(String name, String... extra) {
        var args = new java.util.ArrayList<>(List.of("controller", "create-volume", name, "--required-bytes", "8Mi"));
        args.addAll(List.of(extra));
        CreateVolumeResponse r = cli.json(CreateVolumeResponse.getDefaultInstance(), args.toArray(String[]::new));
        assertEquals(8L << 20, r.getVolume().getCapacityBytes());
        return r.getVolume().getVolumeId();
    }

    /** Where the dir engine keeps a volume's files. */
    static Path volumeDir(String id) {
        return plugin.driver().engine().pool().path().resolve("volumes").resolve(id + ".dir");
    }

    @Test
    void identityInfoCapsProbe() {
        var info = cli.ok("identity", "info");
        assertTrue(info.out().contains("name:") && info.out().contains("local.csi4j.io"), info.out());
        GetPluginInfoResponse parsed = cli.json(GetPluginInfoResponse.getDefaultInstance(), "identity", "info");
        assertEquals("local.csi4j.io", parsed.getName());
        assertEquals("dir", parsed.getManifestMap().get("engine"));

        GetPluginCapabilitiesResponse caps = cli.json(GetPluginCapabilitiesResponse.getDefaultInstance(), "identity", "caps");
        assertTrue(caps.getCapabilitiesList().stream().anyMatch(c -> c.getService().getType() == PluginCapability.Service.Type.CONTROLLER_SERVICE));
        assertTrue(cli.ok("identity", "caps").out().contains("CONTROLLER_SERVICE"));

        assertEquals("ready: true\n", cli.ok("identity", "probe").out());
        assertTrue(cli.json(ProbeResponse.getDefaultInstance(), "identity", "probe").getReady().getValue());
    }

    @Test
    void createGetValidateExpandModifyDelete() {
        String id = createVolume("cv-one", "--cap", "SINGLE_NODE_WRITER,mount,ext4", "--param", "csi.storage.k8s.io/pvc/name=claim");
        assertTrue(Files.isDirectory(volumeDir(id)), "no directory for " + id);
        var table = cli.ok("controller", "get-volume", id);
        assertTrue(table.out().contains("volume id:") && table.out().contains(id) && table.out().contains("8Mi"), table.out());
        ControllerGetVolumeResponse got = cli.json(ControllerGetVolumeResponse.getDefaultInstance(), "controller", "get-volume", id);
        assertEquals(id, got.getVolume().getVolumeId());
        assertFalse(got.getStatus().getVolumeCondition().getAbnormal());

        // idempotent by name: the same name gives the same volume
        assertEquals(id, createVolume("cv-one", "--cap", "SINGLE_NODE_WRITER,mount,ext4", "--param", "csi.storage.k8s.io/pvc/name=claim"));
        var unknownParam = cli.run("controller", "create-volume", "cv-two", "--param", "colour=blue");
        assertEquals(1, unknownParam.exit(), unknownParam::toString);
        assertTrue(unknownParam.err().startsWith("INVALID_ARGUMENT: unknown parameters [colour]"), unknownParam.err());

        ValidateVolumeCapabilitiesResponse valid = cli.json(ValidateVolumeCapabilitiesResponse.getDefaultInstance(),
                "controller", "validate", id, "--cap", "rwo,mount,ext4");
        assertTrue(valid.hasConfirmed());
        var block = cli.run("controller", "validate", id, "--cap", "SINGLE_NODE_WRITER,block");
        assertEquals(1, block.exit(), block::toString);
        assertTrue(block.out().contains("confirmed: no"), block.out());

        ControllerExpandVolumeResponse grown = cli.json(ControllerExpandVolumeResponse.getDefaultInstance(),
                "controller", "expand", id, "--required-bytes", "16Mi");
        assertEquals(16L << 20, grown.getCapacityBytes());
        assertEquals(16L << 20, plugin.driver().volumes().reads().readyVolume(id, "volume").capacityBytes());

        // the dir engine on a non-btrfs pool has no mutable parameter it can apply (the image engine test modifies one)
        var modify = cli.run("controller", "modify", id, "--mutable-param", "compression=zstd");
        assertEquals(1, modify.exit(), modify::toString);
        assertTrue(modify.err().startsWith("INVALID_ARGUMENT: compression needs a btrfs pool"), modify.err());

        assertEquals("deleted volume " + id + "\n", cli.ok("controller", "delete-volume", id).out());
        assertTrue(plugin.driver().catalog().volumes().byId(id).isEmpty(), "the catalog still has " + id);
        assertEquals("{\n}\n", cli.ok("controller", "delete-volume", id, "-o", "json").out()); // deleting again is fine
        // and says there was nothing to delete, exit 0: a deleted id, one never made
        assertEquals("volume " + id + " not found (nothing to delete)\n", cli.ok("controller", "delete-volume", id).out());
        String never = id.substring(0, 4) + "aaaaaaaaaaaaaaaa" + id.substring(20);
        assertEquals("volume " + never + " not found (nothing to delete)\n", cli.ok("controller", "delete-volume", never).out());
        assertEquals("volume no-such-volume not found (nothing to delete)\n", cli.ok("controller", "delete-volume", "no-such-volume").out());
        assertEquals("snapshot no-such-snapshot not found (nothing to delete)\n", cli.ok("controller", "delete-snapshot", "no-such-snapshot").out());
    }

    @Test
    void sizesSayDecimalUnitsAndShortagesInHumanUnits() {
        var decimal = cli.run("controller", "create-volume", "decimal-size", "--required-bytes", "8MB", "-o", "json");
        assertEquals(0, decimal.exit(), decimal::toString);
        assertEquals("csi4j: note: 8MB means 8000000 bytes (7.6Mi), a decimal unit; write 8Mi for 8388608 bytes\n", decimal.err());
        String id = cli.json(CreateVolumeResponse.getDefaultInstance(), "controller", "create-volume", "decimal-size",
                "--required-bytes", "8000000").getVolume().getVolumeId();   // the same volume: 8MB was taken as written
        cli.ok("controller", "delete-volume", id);

        var huge = cli.run("controller", "create-volume", "too-large", "--required-bytes", "1Ei");
        assertEquals(1, huge.exit(), huge::toString);
        assertTrue(huge.err().matches("RESOURCE_EXHAUSTED: not enough space in the pool: 1Ei \\(1152921504606846976 bytes\\) asked, "
                + "[0-9.]+[KMGTPE]i \\([0-9]+ bytes\\) available\n"), huge.err());
    }

    @Test
    void aDeadlineTheClientRanOutOfIsSaidInWords() {
        var slow = cli.run("controller", "create-volume", "deadline-a", "--required-bytes", "8Mi", "--timeout", "1ms");
        assertEquals(1, slow.exit(), slow::toString);
        assertEquals("DEADLINE_EXCEEDED: no answer within --timeout 1ms; the plugin may still be at work: a longer --timeout "
                + "waits for it, and the same command again picks up what it did\n", slow.err());
        var copy = cli.run("controller", "create-volume", "deadline-b", "--snapshot-id", "snap-aaaaaaaaaaaaaaaa-node-1", "--timeout", "1ms");
        assertEquals(1, copy.exit(), copy::toString);
        assertEquals("DEADLINE_EXCEEDED: no answer within --timeout 1ms; the plugin may still be at work: a restore or clone onto "
                + "another node goes on copying (./csi4j cluster status shows its progress); the same command again, with a "
                + "longer --timeout, joins the copy and waits for it\n", copy.err());
        cli.ok("controller", "delete-volume", createVolume("deadline-a"));   // the first may have been made after all
    }

    @Test
    void fsckRefusesBesideTheServingPluginAndSaysWhy() {
        var captured = new java.io.ByteArrayOutputStream();
        java.io.PrintStream err = System.err;
        System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        Cli.Result r;
        try {
            r = Cli.exec("fsck", "--data-dir", dir.resolve("data").toString(), "--engine", "dir");
        } finally {
            System.setErr(err);
        }
        assertEquals(2, r.exit(), r::toString);
        assertEquals("csi4j fsck: a plugin is serving on " + dir.resolve("data").resolve("csi.sock") + "; stop it first: fsck "
                + "compares the catalog with the pool, which a serving plugin changes under it (a live plugin answers "
                + "csi4j controller list-volumes and get-volume, with each volume's condition)\n",
                captured.toString(java.nio.charset.StandardCharsets.UTF_8));
    }

    @Test
    void listVolumesPagesWithPaging() {
        var ids = List.of(createVolume("page-a"), createVolume("page-b"), createVolume("page-c"));
        ListVolumesResponse first = cli.json(ListVolumesResponse.getDefaultInstance(), "controller", "list-volumes", "--max-entries", "1");
        assertEquals(1, first.getEntriesCount());
        assertFalse(first.getNextToken().isEmpty());
        assertTrue(cli.ok("controller", "list-volumes", "--max-entries", "1").out().contains("next token: "));

        ListVolumesResponse all = cli.json(ListVolumesResponse.getDefaultInstance(), "controller", "list-volumes", "--max-entries", "1", "--paging");
        var listed = all.getEntriesList().stream().map(e -> e.getVolume().getVolumeId()).collect(Collectors.toSet());
        assertTrue(listed.containsAll(ids), listed + " lacks some of " + ids);
        assertEquals("", all.getNextToken());

        ListVolumesResponse rest = cli.json(ListVolumesResponse.getDefaultInstance(), "controller", "list-volumes", "--max-entries", "1",
                "--starting-token", first.getNextToken(), "--paging");
        assertEquals(all.getEntriesCount() - 1, rest.getEntriesCount());

        var table = cli.ok("controller", "list-volumes", "--paging");
        assertTrue(table.out().startsWith("VOLUME ID"), table.out());
        for (String id : ids) assertTrue(table.out().contains(id), table.out());
        var yaml = cli.ok("controller", "list-volumes", "-o", "yaml");
        assertTrue(yaml.out().startsWith("entries:\n  - volume:\n"), yaml.out());
        for (String id : ids) cli.ok("controller", "delete-volume", id);
    }

    @Test
    void publishUnpublishCapacityCaps() {
        String id = createVolume("pub-one");
        ControllerPublishVolumeResponse published = cli.json(ControllerPublishVolumeResponse.getDefaultInstance(),
                "controller", "publish", id, "--node-id", "node-1", "--cap", "SINGLE_NODE_WRITER,mount");
        assertNotNull(published);
        assertEquals(List.of("node-1"), plugin.driver().volumes().reads().publishedNodes(id));
        var other = cli.run("controller", "publish", id, "--node-id", "node-2");
        assertEquals(1, other.exit(), other::toString);
        assertTrue(other.err().startsWith("NOT_FOUND: node node-2 does not exist"), other.err());
        assertTrue(cli.ok("controller", "unpublish", id, "--node-id", "node-1").out().contains("from node node-1"));
        assertEquals(List.of(), plugin.driver().volumes().reads().publishedNodes(id));

        GetCapacityResponse capacity = cli.json(GetCapacityResponse.getDefaultInstance(), "controller", "capacity", "--cap", "rwo,mount");
        assertTrue(capacity.getAvailableCapacity() > 0);
        assertTrue(cli.ok("controller", "capacity").out().contains("available:"));

        ControllerGetCapabilitiesResponse caps = cli.json(ControllerGetCapabilitiesResponse.getDefaultInstance(), "controller", "caps");
        assertTrue(caps.getCapabilitiesList().stream().anyMatch(c -> c.getRpc().getType() == ControllerServiceCapability.RPC.Type.CREATE_DELETE_SNAPSHOT));
        assertTrue(cli.ok("controller", "caps").out().contains("CLONE_VOLUME"));
        cli.ok("controller", "delete-volume", id);
    }

    @Test
    void snapshotsRestoreAndClone() throws Exception {
        String source = createVolume("snap-source");
        Files.writeString(volumeDir(source).resolve("marker"), "x", java.nio.file.StandardOpenOption.CREATE_NEW);
        CreateSnapshotResponse snap = cli.json(CreateSnapshotResponse.getDefaultInstance(), "controller", "create-snapshot", "snap-one",
                "--source-volume-id", source);
        String snapId = snap.getSnapshot().getSnapshotId();
        assertEquals(source, snap.getSnapshot().getSourceVolumeId());
        assertTrue(snap.getSnapshot().getReadyToUse());

        var get = cli.ok("controller", "get-snapshot", snapId);
        assertTrue(get.out().contains("snapshot id:") && get.out().contains(snapId), get.out());
        ListSnapshotsResponse bySource = cli.json(ListSnapshotsResponse.getDefaultInstance(), "controller", "list-snapshots",
                "--source-volume-id", source, "--paging");
        assertEquals(List.of(snapId), bySource.getEntriesList().stream().map(e -> e.getSnapshot().getSnapshotId()).toList());
        ListSnapshotsResponse byId = cli.json(ListSnapshotsResponse.getDefaultInstance(), "controller", "list-snapshots", "--snapshot-id", snapId);
        assertEquals(1, byId.getEntriesCount());
        assertTrue(cli.ok("controller", "list-snapshots").out().contains(snapId));

        String restored = createVolume("from-snap", "--snapshot-id", snapId);
        String cloned = createVolume("from-volume", "--source-volume-id", source);
        assertEquals("x", Files.readString(volumeDir(restored).resolve("marker")));
        assertEquals("x", Files.readString(volumeDir(cloned).resolve("marker")));
        assertTrue(cli.ok("controller", "get-volume", restored).out().contains("snapshot " + snapId));
        assertTrue(cli.ok("controller", "get-volume", cloned).out().contains("volume " + source));
        var both = cli.run("controller", "create-volume", "x", "--snapshot-id", snapId, "--source-volume-id", source);
        assertEquals(1, both.exit());
        assertTrue(both.err().contains("exclude each other"), both.err());

        assertEquals("deleted snapshot " + snapId + "\n", cli.ok("controller", "delete-snapshot", snapId).out());
        assertEquals("snapshot " + snapId + " not found (nothing to delete)\n", cli.ok("controller", "delete-snapshot", snapId).out());
        assertEquals(0, cli.json(ListSnapshotsResponse.getDefaultInstance(), "controller", "list-snapshots", "--snapshot-id", snapId).getEntriesCount());
        for (String id : List.of(restored, cloned, source)) cli.ok("controller", "delete-volume", id);
    }

    @Test
    void groupSnapshotsFindTheirMembers() {
        String a = createVolume("grp-a");
        String b = createVolume("grp-b");
        GroupControllerGetCapabilitiesResponse caps = cli.json(GroupControllerGetCapabilitiesResponse.getDefaultInstance(), "group", "caps");
        assertEquals(GroupControllerServiceCapability.RPC.Type.CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT,
                caps.getCapabilities(0).getRpc().getType());
        assertTrue(cli.ok("group", "caps").out().contains("CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT"));

        CreateVolumeGroupSnapshotResponse created = cli.json(CreateVolumeGroupSnapshotResponse.getDefaultInstance(), "group", "create-snapshot",
                "gs-one", "--source-volume-id", a, "--source-volume-id", b);
        var g = created.getGroupSnapshot();
        assertEquals(2, g.getSnapshotsCount());
        var members = g.getSnapshotsList().stream().map(Snapshot::getSnapshotId).sorted().toList();

        // without --snapshot-id the cli finds the members through ListSnapshots
        GetVolumeGroupSnapshotResponse got = cli.json(GetVolumeGroupSnapshotResponse.getDefaultInstance(), "group", "get-snapshot", g.getGroupSnapshotId());
        assertEquals(members, got.getGroupSnapshot().getSnapshotsList().stream().map(Snapshot::getSnapshotId).sorted().toList());
        var table = cli.ok("group", "get-snapshot", g.getGroupSnapshotId(), "--snapshot-id", members.get(0), "--snapshot-id", members.get(1));
        assertTrue(table.out().contains("group snapshot id:") && table.out().contains(members.get(0)), table.out());

        assertEquals("deleted group snapshot " + g.getGroupSnapshotId() + "\n", cli.ok("group", "delete-snapshot", g.getGroupSnapshotId()).out());
        for (String s : members) assertTrue(plugin.driver().catalog().snapshots().byId(s).isEmpty(), s + " survived");
        cli.ok("controller", "delete-volume", a);
        cli.ok("controller", "delete-volume", b);
    }

    @Test
    void errorsPrintTheCodeAndExitNonZero() {
        var missing = cli.run("controller", "get-volume", "vol-doesnotexist-node-1");
        assertEquals(1, missing.exit());
        assertEquals("", missing.out());
        assertTrue(missing.err().startsWith("NOT_FOUND: "), missing.err());
        assertEquals(1, missing.err().lines().count(), missing.err());

        var json = cli.run("controller", "get-snapshot", "snap-doesnotexist-node-1", "-o", "json");
        assertEquals(1, json.exit());
        assertTrue(json.err().startsWith("NOT_FOUND: "), json.err());

        var invalid = cli.run("controller", "modify", "vol-doesnotexist-node-1", "--mutable-param", "nonsense=1");
        assertEquals(1, invalid.exit());
        assertTrue(invalid.err().matches("(?s)(INVALID_ARGUMENT|NOT_FOUND): .*"), invalid.err());

        var usage = cli.run("controller", "create-volume");
        assertEquals(2, usage.exit());
        assertTrue(usage.err().contains("Missing required parameter: 'NAME'"), usage.err());

        var badCap = cli.run("controller", "create-volume", "x", "--cap", "EVERYONE,mount");
        assertEquals(2, badCap.exit());
        assertTrue(badCap.err().contains("unknown access mode 'EVERYONE'"), badCap.err());

        var badSize = cli.run("controller", "create-volume", "x", "--required-bytes", "lots");
        assertEquals(2, badSize.exit());
        assertTrue(badSize.err().contains("not a size"), badSize.err());

        var nowhere = Cli.exec("identity", "probe", "--endpoint", dir.resolve("no.sock").toString(), "--timeout", "5s");
        assertEquals(1, nowhere.exit());
        assertTrue(nowhere.err().startsWith("UNAVAILABLE: cannot reach unix://" + dir.resolve("no.sock")), nowhere.err());
        // a restore that cannot reach its plugin says the copy a cluster may have started goes on, and how to join it
        var restore = Cli.exec("controller", "create-volume", "r", "--snapshot-id", "snap-aaaaaaaaaaaaaaaa-node-a",
                "--endpoint", dir.resolve("no.sock").toString(), "--timeout", "5s");
        assertEquals(1, restore.exit());
        assertTrue(restore.err().startsWith("UNAVAILABLE: cannot reach unix://" + dir.resolve("no.sock")), restore.err());
        assertTrue(restore.err().endsWith("; a restore or clone onto another node that had started goes on copying between "
                + "the nodes: the same command again joins it once the plugin answers\n"), restore.err());
    }
}
