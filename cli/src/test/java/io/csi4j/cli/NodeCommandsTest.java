package io.csi4j.cli;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.cli.testing.Cli;
import io.csi4j.cli.testing.LivePlugin;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.os.MountTable;
import io.csi4j.proto.csi.*;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Node commands against the image engine (loop devices, ext4, real mounts): needs root. */
class NodeCommandsTest {
    @TempDir
    Path dir;
    LivePlugin plugin;
    Cli cli;

    @BeforeEach
    void start() {
        Privileged.requireRoot();
        plugin = LivePlugin.start(dir, EngineKind.IMAGE, false);
        cli = Cli.against(plugin.endpoint());
    }

    @AfterEach
    void stop() {
        if (plugin == null) return;
        try {
            // whatever a failed test left staged or published goes before the driver does
            for (var m : MountTable.read().under(dir)) io.csi4j.driver.os.Mounts.unmount(m.mountPoint());
        } finally {
            plugin.close();
        }
        assertTrue(MountTable.read().under(dir).isEmpty(), "mounts left under " + dir);
    }

    @Test
    void stagePublishWriteStatsExpandUnpublishUnstage() throws Exception {
        CreateVolumeResponse created = cli.json(CreateVolumeResponse.getDefaultInstance(), "controller", "create-volume", "node-vol",
                "--required-bytes", "32Mi", "--cap", "SINGLE_NODE_WRITER,mount,ext4", "--mutable-param", "readAheadKiB=128");
        String id = created.getVolume().getVolumeId();
        Path staging = dir.resolve("staging");
        Path target = dir.resolve("pods/p1/vol");

        NodeGetInfoResponse info = cli.json(NodeGetInfoResponse.getDefaultInstance(), "node", "info");
        assertEquals("node-1", info.getNodeId());
        assertTrue(cli.run("node", "info").out().contains("node id:     node-1"));
        NodeGetCapabilitiesResponse caps = cli.json(NodeGetCapabilitiesResponse.getDefaultInstance(), "node", "caps");
        assertTrue(caps.getCapabilitiesList().stream().anyMatch(c -> c.getRpc().getType() == NodeServiceCapability.RPC.Type.STAGE_UNSTAGE_VOLUME));
        assertTrue(cli.run("node", "caps").out().contains("GET_VOLUME_STATS"));

        var stage = cli.run("node", "stage", id, "--staging-path", staging.toString(), "--cap", "SINGLE_NODE_WRITER,mount,ext4");
        assertEquals(0, stage.exit(), stage::toString);
        assertEquals("staged volume " + id + " at " + staging + "\n", stage.out());
        assertTrue(MountTable.read().isMountPoint(staging), "nothing mounted at " + staging);

        var publish = cli.run("node", "publish", id, "--staging-path", staging.toString(), "--target-path", target.toString(),
                "--cap", "SINGLE_NODE_WRITER,mount,ext4");
        assertEquals(0, publish.exit(), publish::toString);
        Files.writeString(target.resolve("data.txt"), "written through the published path");
        assertEquals("written through the published path", Files.readString(staging.resolve("data.txt")));

        NodeGetVolumeStatsResponse stats = cli.json(NodeGetVolumeStatsResponse.getDefaultInstance(), "node", "stats", id,
                "--volume-path", target.toString());
        var bytes = stats.getUsageList().stream().filter(u -> u.getUnit() == VolumeUsage.Unit.BYTES).findFirst().orElseThrow();
        assertTrue(bytes.getTotal() > 20L << 20 && bytes.getUsed() > 0, stats::toString);
        var statsTable = cli.run("node", "stats", id, "--volume-path", target.toString());
        assertTrue(statsTable.out().startsWith("UNIT") && statsTable.out().contains("INODES"), statsTable.out());

        // expansion: controller side, then node side (offline at re-stage when online resize is not permitted here)
        ControllerExpandVolumeResponse grown = cli.json(ControllerExpandVolumeResponse.getDefaultInstance(), "controller", "expand", id,
                "--required-bytes", "64Mi");
        assertEquals(64L << 20, grown.getCapacityBytes());
        var nodeExpand = cli.run("node", "expand", id, "--volume-path", target.toString(), "--required-bytes", "64Mi");
        if (nodeExpand.exit() == 0) {
            NodeExpandVolumeResponse r = cli.json(NodeExpandVolumeResponse.getDefaultInstance(), "node", "expand", id,
                    "--volume-path", target.toString());
            assertTrue(r.getCapacityBytes() >= 64L << 20, r::toString);
        } else {
            assertTrue(nodeExpand.err().startsWith("FAILED_PRECONDITION: growing ext4 online needs CAP_SYS_RESOURCE"), nodeExpand::toString);
        }

        assertTrue(cli.run("controller", "modify", id, "--mutable-param", "readAheadKiB=256").out().contains("modified volume"));
        assertEquals("256", plugin.driver().volumes().reads().readyVolume(id, "volume").mutableParameters().get("readAheadKiB"));

        var unpublish = cli.run("node", "unpublish", id, "--target-path", target.toString());
        assertEquals("unpublished volume " + id + " from " + target + "\n", unpublish.out());
        assertFalse(MountTable.read().isMountPoint(target));
        var unstage = cli.run("node", "unstage", id, "--staging-path", staging.toString());
        assertEquals("unstaged volume " + id + " from " + staging + "\n", unstage.out());
        assertFalse(MountTable.read().isMountPoint(staging));

        // a second stage shows the data survived, and a grown filesystem when it was grown offline
        assertEquals(0, cli.run("node", "stage", id, "--staging-path", staging.toString(), "--cap", "SINGLE_NODE_WRITER,mount,ext4").exit());
        assertEquals("written through the published path", Files.readString(staging.resolve("data.txt")));
        NodeGetVolumeStatsResponse after = cli.json(NodeGetVolumeStatsResponse.getDefaultInstance(), "node", "stats", id,
                "--volume-path", staging.toString());
        assertTrue(after.getUsage(0).getTotal() > 50L << 20, after::toString);
        assertEquals(0, cli.run("node", "unstage", id, "--staging-path", staging.toString()).exit());
        assertEquals(0, cli.run("controller", "delete-volume", id).exit());
    }

    @Test
    void nodeErrorsCarryTheCode() {
        var missing = cli.run("node", "stage", "vol-nothere-node-1", "--staging-path", dir.resolve("s").toString());
        assertEquals(1, missing.exit());
        assertTrue(missing.err().startsWith("NOT_FOUND: "), missing.err());
        var noPath = cli.run("node", "publish", "vol-nothere-node-1");
        assertEquals(2, noPath.exit());
        assertTrue(noPath.err().contains("--target-path"), noPath.err());
    }
}
