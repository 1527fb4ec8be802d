package io.csi4j.cli.reliability;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.proto.csi.ListSnapshotsRequest;
import io.csi4j.proto.csi.ListVolumesRequest;
import io.csi4j.proto.csi.VolumeContentSource;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 8, catalog damage: a truncated, emptied or deleted catalog is refused at start-up with a message
 * that points at {@code csi4j fsck}; {@code fsck} reports it and {@code fsck --rebuild} writes a new catalog
 * from the pool's sidecars (the old file moved aside), after which the plugin serves the same volumes and
 * snapshots under the same ids and names, with their data. A brand-new data directory still starts.
 */
class CatalogDamageTest {
    static final String[] FLAGS = {"--engine", "image", "--pool-size", "1Gi", "--overcommit-ratio", "20"};

    record Listing(Map<String, Long> volumes, Map<String, String> snapshots) {}

    @Test
    void truncatedEmptiedAndDeletedCatalogsAreRefusedAndRebuiltByFsck(@TempDir Path tmp) throws Exception {
        Leaks.requireRoot();
        Path data = Files.createDirectories(tmp.resolve("data"));
        Path node = Files.createDirectories(tmp.resolve("kubelet"));
        try {
            World w = new World("fsck", node, 1);
            Listing before;
            try (Plugin plugin = Plugin.start(data, FLAGS)) {
                var rpc = new Rpc(plugin.channel(), null);
                w.createVolume(VolumeContentSource.getDefaultInstance(), null, World.VOLUME_BYTES).step().run(rpc);
                w.createVolume(VolumeContentSource.getDefaultInstance(), null, World.VOLUME_BYTES).step().run(rpc);
                var a = w.volumes.values().stream().toList().get(0);
                var b = w.volumes.values().stream().toList().get(1);
                for (var op : List.of(w.attach(a), w.stage(a), w.publish(a), w.write(a))) op.step().run(rpc);
                w.snapshot(a).step().run(rpc);
                w.groupSnapshot(a, b).step().run(rpc);
                for (var op : List.of(w.unpublish(a), w.unstage(a), w.detach(a))) op.step().run(rpc);
                var snap = w.snapshots.values().iterator().next();
                w.createVolume(VolumeContentSource.newBuilder().setSnapshot(
                        VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snap.id())).build(), snap.data(), snap.size()).step().run(rpc);
                before = listing(rpc);
                assertEquals(3, before.volumes().size());
                assertEquals(3, before.snapshots().size());
                assertEquals(0, plugin.stop(30_000));
            }
            Path catalog = data.resolve("catalog.db");

            // 1. truncated to half: damaged
            try (RandomAccessFile file = new RandomAccessFile(catalog.toFile(), "rw")) {
                file.setLength(file.length() / 2);
            }
            expectRefusal(data, "damaged");
            var check = Plugin.run("fsck", "--data-dir", data.toString());
            System.out.println(check.stdout() + check.stderr());
            assertEquals(1, check.exit(), "fsck finds the damage: " + check.stdout() + check.stderr());
            assertTrue(check.stdout().contains("catalog: damaged"), check.stdout());
            rebuildAndCompare(data, w, before, node);

            // 2. emptied (SQLite would take a 0-byte file for a new database): refused like a missing one
            Files.write(catalog, new byte[0]);
            expectRefusal(data, "missing or empty");
            rebuildAndCompare(data, w, before, node);

            // 3. deleted
            for (String suffix : List.of("", "-wal", "-shm")) Files.deleteIfExists(Path.of(catalog + suffix));
            expectRefusal(data, "missing or empty");
            rebuildAndCompare(data, w, before, node);

            try (Stream<Path> files = Files.list(data)) {
                long aside = files.filter(p -> p.getFileName().toString().startsWith("catalog.db.damaged-")
                        && !p.getFileName().toString().endsWith("-wal") && !p.getFileName().toString().endsWith("-shm")).count();
                assertTrue(aside >= 2, "every replaced catalog is kept aside");
            }

            // a brand-new data directory starts, and so does one whose empty catalog has no objects beside it
            Path fresh = Files.createDirectories(tmp.resolve("fresh"));
            try (Plugin plugin = Plugin.start(fresh, "--engine", "dir")) {
                assertEquals(0, plugin.stop(30_000));
            }
            for (String suffix : List.of("", "-wal", "-shm")) Files.deleteIfExists(Path.of(fresh.resolve("catalog.db") + suffix));
            Files.write(fresh.resolve("catalog.db"), new byte[0]);
            try (Plugin plugin = Plugin.start(fresh, "--engine", "dir")) {
                assertEquals(0, plugin.stop(30_000));
            }
        } finally {
            Leaks.cleanUp(tmp);
        }
    }

    /** The dir engine's sidecars rebuild its catalog too (fsck --engine dir). */
    @Test
    void dirEngineCatalogIsRebuiltFromItsSidecars(@TempDir Path tmp) throws Exception {
        Path data = Files.createDirectories(tmp.resolve("data"));
        String[] dir = {"--engine", "dir"};
        var mount = io.csi4j.proto.csi.VolumeCapability.newBuilder()
                .setMount(io.csi4j.proto.csi.VolumeCapability.MountVolume.getDefaultInstance())
                .setAccessMode(io.csi4j.proto.csi.VolumeCapability.AccessMode.newBuilder()
                        .setMode(io.csi4j.proto.csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
        Listing before;
        String id;
        try (Plugin plugin = Plugin.start(data, dir)) {
            var rpc = new Rpc(plugin.channel(), null);
            id = rpc.controller().createVolume(io.csi4j.proto.csi.CreateVolumeRequest.newBuilder().setName("dir-v")
                    .setCapacityRange(Rpc.atLeast(64L << 20)).addVolumeCapabilities(mount).build()).getVolume().getVolumeId();
            rpc.controller().createSnapshot(io.csi4j.proto.csi.CreateSnapshotRequest.newBuilder().setName("dir-s").setSourceVolumeId(id).build());
            before = listing(rpc);
            assertEquals(0, plugin.stop(30_000));
        }
        for (String suffix : List.of("", "-wal", "-shm")) Files.deleteIfExists(Path.of(data.resolve("catalog.db") + suffix));
        List<String> command = Plugin.command(data, dir);
        var refused = Plugin.run(command.subList(command.indexOf("serve"), command.size()).toArray(String[]::new));
        assertEquals(3, refused.exit(), refused.stderr());
        var fsck = Plugin.run("fsck", "--data-dir", data.toString(), "--engine", "dir", "--node-id", "node-1", "--rebuild");
        assertEquals(0, fsck.exit(), fsck.stdout() + fsck.stderr());
        assertTrue(fsck.stdout().contains("rebuilt from the pool: 1 volumes, 1 snapshots"), fsck.stdout());
        try (Plugin plugin = Plugin.start(data, dir)) {
            var rpc = new Rpc(plugin.channel(), null);
            assertEquals(before, listing(rpc));
            assertEquals(id, rpc.controller().createVolume(io.csi4j.proto.csi.CreateVolumeRequest.newBuilder().setName("dir-v")
                    .setCapacityRange(Rpc.atLeast(64L << 20)).addVolumeCapabilities(mount).build()).getVolume().getVolumeId());
            assertEquals(0, plugin.stop(30_000));
        }
    }

    private static void expectRefusal(Path data, String why) throws Exception {
        long t0 = System.nanoTime();
        List<String> command = Plugin.command(data, FLAGS);
        var serve = Plugin.run(command.subList(command.indexOf("serve"), command.size()).toArray(String[]::new));
        System.out.printf("serve refused in %d ms: %s", (System.nanoTime() - t0) / 1_000_000, serve.stderr());
        assertEquals(3, serve.exit(), "serve must refuse to start: " + serve.stdout() + serve.stderr());
        assertTrue(serve.stderr().contains(why) && serve.stderr().contains("csi4j fsck --data-dir"), serve.stderr());
        assertFalse(serve.stderr().contains("\tat "), "one clear line, not a stack trace: " + serve.stderr());
        assertFalse(Files.exists(data.resolve("csi.sock")), "no socket from a refused start");
    }

    private static void rebuildAndCompare(Path data, World w, Listing before, Path node) throws Exception {
        var fsck = Plugin.run("fsck", "--data-dir", data.toString(), "--node-id", "node-1", "--rebuild");
        System.out.println(fsck.stdout() + fsck.stderr());
        assertEquals(0, fsck.exit(), fsck.stdout() + fsck.stderr());
        assertTrue(fsck.stdout().contains("rebuilt from the pool: 3 volumes, 3 snapshots, 1 group snapshots"), fsck.stdout());
        var again = Plugin.run("fsck", "--data-dir", data.toString());
        assertEquals(0, again.exit(), "a rebuilt catalog checks clean: " + again.stdout() + again.stderr());
        try (Plugin plugin = Plugin.start(data, FLAGS)) {
            assertFalse(plugin.stderr().contains("orphans:"), plugin.stderr());
            var rpc = new Rpc(plugin.channel(), null);
            assertEquals(before, listing(rpc), "the rebuilt catalog lists what the old one did");
            // idempotency by name survives: the same CreateVolume answers the same volume
            var a = w.volumes.values().iterator().next();
            String id = a.id;
            var same = rpc.controller().createVolume(io.csi4j.proto.csi.CreateVolumeRequest.newBuilder().setName(a.name)
                    .setCapacityRange(Rpc.atLeast(World.VOLUME_BYTES)).addVolumeCapabilities(Rpc.mountXfs()).build());
            assertEquals(id, same.getVolume().getVolumeId());
            // every volume reads back its data
            for (var v : List.copyOf(w.volumes.values())) {
                for (var op : List.of(w.attach(v), w.stage(v), w.publish(v))) op.step().run(rpc);
                Path file = w.target(v).resolve(World.DATA_FILE);
                assertEquals(v.data, Files.exists(file) ? Files.readString(file) : null, "data of " + v.name);
                for (var op : List.of(w.unpublish(v), w.unstage(v), w.detach(v))) op.step().run(rpc);
            }
            assertEquals(0, plugin.stop(30_000));
        }
    }

    private static Listing listing(Rpc rpc) {
        Map<String, Long> volumes = rpc.controller().listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesList().stream()
                .collect(Collectors.toMap(e -> e.getVolume().getVolumeId(), e -> e.getVolume().getCapacityBytes(), (x, y) -> x, TreeMap::new));
        Map<String, String> snapshots = rpc.controller().listSnapshots(ListSnapshotsRequest.getDefaultInstance()).getEntriesList().stream()
                .collect(Collectors.toMap(e -> e.getSnapshot().getSnapshotId(),
                        e -> e.getSnapshot().getSourceVolumeId() + "/" + e.getSnapshot().getSizeBytes() + "/"
                                + e.getSnapshot().getGroupSnapshotId(), (x, y) -> x, TreeMap::new));
        return new Listing(volumes, snapshots);
    }
}
