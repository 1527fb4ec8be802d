package io.csi4j.cli.reliability;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.cli.reliability.World.Vol;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.proto.addons.volumegroup.ListVolumeGroupsRequest;
import io.csi4j.proto.csi.ListSnapshotsRequest;
import io.csi4j.proto.csi.ListVolumesRequest;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 8, crash and restart: {@code csi4j serve} as a child process, several clients driving a random
 * mix of every mutating CSI (and, when served, VolumeGroup) RPC, and SIGKILL at random moments — while
 * serving and while starting up. After each restart every unanswered call is retried as a CO would and
 * must answer OK; then the plugin's lists must equal the model, every published volume must read back
 * its data, and no image file, loop device, mount or catalog row may be left that the model does not own.
 *
 * <p>CI: {@code csi4j.crash.kills} kills (default 100). Soak: {@code -Dcsi4j.soak=true} kills until a
 * failure (or {@code csi4j.soak.minutes}) — see the README.
 */
class CrashRestartTest {
    static final String[] FLAGS = {"--engine", "image", "--pool-size", "3Gi", "--overcommit-ratio", "20"};
    static final int CLIENTS = 3;

    private final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    private int kills, startupKills, retried, checks, readBacks;
    private final java.util.concurrent.ConcurrentSkipListMap<String, java.util.concurrent.atomic.LongAdder> answered =
            new java.util.concurrent.ConcurrentSkipListMap<>();

    @Test
    void sigkillAtRandomMomentsLosesAndLeaksNothing(@TempDir Path tmp) throws Exception {
        Leaks.requireRoot();
        boolean soak = Boolean.getBoolean("csi4j.soak");
        int maxKills = soak ? Integer.MAX_VALUE : Integer.getInteger("csi4j.crash.kills", 100);
        long deadline = soak && System.getProperty("csi4j.soak.minutes") != null
                ? System.nanoTime() + Long.getLong("csi4j.soak.minutes") * 60_000_000_000L : Long.MAX_VALUE;
        long seed = Long.getLong("csi4j.crash.seed", System.nanoTime());
        System.out.println("crash harness: seed " + seed + " (-Dcsi4j.crash.seed=" + seed + " replays the choices)");
        Random random = new Random(seed);
        Path data = Files.createDirectories(tmp.resolve("data"));
        Path node = Files.createDirectories(tmp.resolve("kubelet"));
        List<World> worlds = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) worlds.add(new World("c" + i, node, random.nextLong()));
        long started = System.nanoTime();
        Plugin plugin = null;
        try {
            plugin = Plugin.start(data, FLAGS);
            System.out.println(plugin.startupLine);
            while (kills < maxKills && System.nanoTime() < deadline && failures.isEmpty()) {
                if (random.nextInt(8) == 0) {
                    plugin.kill();
                    killDuringStartUp(data, random.nextInt(1500));
                    plugin = Plugin.start(data, FLAGS);
                } else {
                    runUntilKilled(plugin, worlds, 50 + random.nextInt(700));
                    plugin = Plugin.start(data, FLAGS);
                }
                afterRestart(plugin, worlds, data, node);
                if (soak && kills % 50 == 0) printCounts(started);
            }
            assertTrue(failures.isEmpty(), () -> "after " + kills + " kills:\n" + String.join("\n", failures));
            readBackEverything(plugin, worlds, node);
            tearDown(plugin, worlds);
            checkEmpty(plugin, data, node);
            assertEquals(0, plugin.stop(30_000), "SIGTERM stops the plugin cleanly");
            try (Catalog catalog = Catalog.openIn(data)) {
                assertEquals(0, catalog.volumes().count() + catalog.snapshots().count() + catalog.groupSnapshots().count()
                        + catalog.volumeGroups().count(), "catalog rows left after everything was deleted");
            }
        } finally {
            if (plugin != null) plugin.close();
            printCounts(started);
            Leaks.cleanUp(tmp);
        }
        assertTrue(failures.isEmpty(), () -> String.join("\n", failures));
        assertTrue(kills >= Math.min(maxKills, 1));
    }

    private void printCounts(long started) {
        System.out.printf("crash harness: %d kills (%d during start-up), %d requests, %d retried calls, %d invariant checks, "
                + "%d data read-backs, mean start-up %d ms, %.0f s%n", kills, startupKills, Rpc.REQUESTS.get(), retried, checks, readBacks,
                Plugin.meanStartMillis(),
                (System.nanoTime() - started) / 1e9);
        System.out.println("crash harness: operations answered OK " + answered);
    }

    /** Clients run random operations until the plugin is SIGKILLed after {@code millis}; unanswered calls are kept. */
    private void runUntilKilled(Plugin plugin, List<World> worlds, int millis) throws InterruptedException {
        var rpc = new Rpc(plugin.channel(), plugin.addonsChannel());
        AtomicBoolean killed = new AtomicBoolean();
        List<Thread> clients = new ArrayList<>();
        for (World w : worlds) {
            clients.add(Thread.ofVirtual().start(() -> {
                while (!killed.get() && failures.isEmpty()) {
                    World.Op op = w.next(rpc.hasVolumeGroups());
                    try {
                        op.step().run(rpc);
                        answered.computeIfAbsent(op.label().split(" ")[0], k -> new java.util.concurrent.atomic.LongAdder()).increment();
                    } catch (StatusRuntimeException e) {
                        if (killed.get()) {
                            w.pending = op;    // no answer: the CO retries it after the restart
                        } else {
                            failures.add(w.prefix + ": " + op.label() + " answered " + e.getStatus());
                        }
                        return;
                    } catch (IOException | RuntimeException e) {
                        failures.add(w.prefix + ": " + op.label() + " failed: " + e);
                        return;
                    }
                }
            }));
        }
        Thread.sleep(millis);
        killed.set(true);
        plugin.kill();
        kills++;
        for (Thread t : clients) t.join();
    }

    /** SIGKILL while the plugin opens the catalog, reconciles or binds its socket. */
    private void killDuringStartUp(Path data, int millis) throws Exception {
        Process p = new ProcessBuilder(Plugin.command(data, FLAGS)).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        Thread.sleep(millis);
        p.destroyForcibly();
        p.waitFor();
        kills++;
        startupKills++;
    }

    private void afterRestart(Plugin plugin, List<World> worlds, Path data, Path node) throws IOException {
        if (plugin.stderr().contains("orphans:")) failures.add("restart found orphans: " + plugin.stderr());
        var rpc = new Rpc(plugin.channel(), plugin.addonsChannel());
        for (World w : worlds) {
            if (w.pending == null) continue;
            World.Op op = w.pending;
            w.pending = null;
            retried++;
            try {
                op.step().run(rpc);
            } catch (StatusRuntimeException e) {
                failures.add(w.prefix + ": the retry of " + op.label() + " answered " + e.getStatus()
                        + " (the spec allows only OK once the first attempt's effect is finished or rolled back)");
            }
        }
        if (failures.isEmpty()) checkInvariants(rpc, worlds, data, node);
    }

    /** Lists equal the model, published volumes read back their data, and the kernel and pool hold nothing extra. */
    private void checkInvariants(Rpc rpc, List<World> worlds, Path data, Path node) throws IOException {
        checks++;
        Map<String, Long> expectedVolumes = new TreeMap<>();
        Set<String> expectedSnapshots = new TreeSet<>();
        Map<String, Set<String>> expectedGroups = new TreeMap<>();
        int staged = 0, published = 0;
        for (World w : worlds) {
            for (Vol v : w.volumes.values()) {
                expectedVolumes.put(v.id, v.capacity);
                if (v.staged) staged++;
                if (v.published) {
                    published++;
                    Path file = w.target(v).resolve(World.DATA_FILE);
                    String actual = Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : null;
                    readBacks++;
                    if (!java.util.Objects.equals(actual, v.data)) {
                        failures.add("volume " + v.id + " (" + v.name + ") reads back " + actual + ", expected " + v.data);
                    }
                }
            }
            expectedSnapshots.addAll(w.snapshotIds());
            w.groups.values().forEach(g -> expectedGroups.put(g.id(), new TreeSet<>(g.members())));
        }
        Map<String, Long> listedVolumes = new TreeMap<>();
        String token = "";
        do {
            var page = rpc.controller().listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(5).setStartingToken(token).build());
            page.getEntriesList().forEach(e -> listedVolumes.put(e.getVolume().getVolumeId(), e.getVolume().getCapacityBytes()));
            token = page.getNextToken();
        } while (!token.isEmpty());
        if (!listedVolumes.equals(expectedVolumes)) failures.add("ListVolumes " + listedVolumes + " != model " + expectedVolumes);
        Set<String> listedSnapshots = rpc.controller().listSnapshots(ListSnapshotsRequest.getDefaultInstance()).getEntriesList()
                .stream().map(e -> e.getSnapshot().getSnapshotId()).collect(Collectors.toCollection(TreeSet::new));
        if (!listedSnapshots.equals(expectedSnapshots)) failures.add("ListSnapshots " + listedSnapshots + " != model " + expectedSnapshots);
        if (rpc.hasVolumeGroups()) {
            Map<String, Set<String>> listedGroups = new TreeMap<>();
            rpc.volumeGroups().listVolumeGroups(ListVolumeGroupsRequest.getDefaultInstance()).getEntriesList()
                    .forEach(e -> listedGroups.put(e.getVolumeGroup().getVolumeGroupId(), e.getVolumeGroup().getVolumesList()
                            .stream().map(v -> v.getVolumeId()).collect(Collectors.toCollection(TreeSet::new))));
            if (!listedGroups.equals(expectedGroups)) failures.add("ListVolumeGroups " + listedGroups + " != model " + expectedGroups);
        }
        Path pool = data.resolve("pool");
        Set<String> volumeFiles = artifacts(pool.resolve("volumes"));
        if (!volumeFiles.equals(expectedVolumes.keySet())) failures.add("volume images " + volumeFiles + " != model " + expectedVolumes.keySet());
        Set<String> snapshotFiles = artifacts(pool.resolve("snapshots"));
        if (!snapshotFiles.equals(expectedSnapshots)) failures.add("snapshot images " + snapshotFiles + " != model " + expectedSnapshots);
        try (Stream<Path> leftovers = Files.list(pool.resolve(".tmp"))) {
            List<Path> left = leftovers.toList();
            if (!left.isEmpty()) failures.add("temporary files after restart: " + left);
        }
        List<String> loops = Leaks.loopsUnder(pool);
        if (loops.size() != staged) failures.add(loops.size() + " loop devices for " + staged + " staged volumes: " + loops);
        List<Path> mounts = Leaks.mountsUnder(node, null);
        if (mounts.size() != staged + published) {
            failures.add(mounts.size() + " mounts for " + staged + " staged and " + published + " published: " + mounts);
        }
    }

    /** Artifact ids in a pool directory: every file but the sidecars, by its id. */
    private static Set<String> artifacts(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> !n.endsWith(".meta"))
                    .map(n -> n.substring(0, n.lastIndexOf('.') < 0 ? n.length() : n.lastIndexOf('.')))
                    .collect(Collectors.toCollection(TreeSet::new));
        }
    }

    /** Every volume staged and published and read; every snapshot restored, staged, published and read. */
    private void readBackEverything(Plugin plugin, List<World> worlds, Path node) throws IOException {
        var rpc = new Rpc(plugin.channel(), plugin.addonsChannel());
        for (World w : worlds) {
            List<World.Snap> all = new ArrayList<>(w.snapshots.values());
            w.groupSnapshots.values().forEach(g -> all.addAll(g.members().values()));
            for (World.Snap s : all) {
                var restore = w.createVolume(io.csi4j.proto.csi.VolumeContentSource.newBuilder().setSnapshot(
                        io.csi4j.proto.csi.VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(s.id())).build(), s.data(), s.size());
                restore.step().run(rpc);
            }
            for (Vol v : List.copyOf(w.volumes.values())) {
                if (!v.attached) w.attach(v).step().run(rpc);
                if (!v.staged) w.stage(v).step().run(rpc);
                if (!v.published) w.publish(v).step().run(rpc);
            }
        }
        checkInvariants(rpc, worlds, plugin.dataDir, node);
        assertTrue(failures.isEmpty(), () -> "read-back of every volume and snapshot:\n" + String.join("\n", failures));
    }

    private void tearDown(Plugin plugin, List<World> worlds) throws IOException {
        var rpc = new Rpc(plugin.channel(), plugin.addonsChannel());
        World.deleteEverything(worlds, rpc);
    }

    private void checkEmpty(Plugin plugin, Path data, Path node) throws IOException {
        var rpc = new Rpc(plugin.channel(), plugin.addonsChannel());
        checkInvariants(rpc, List.of(), data, node);
        assertTrue(failures.isEmpty(), () -> "after deleting everything:\n" + String.join("\n", failures));
        assertEquals(List.of(), Leaks.loopsUnder(data.resolve("pool")));
        assertEquals(List.of(), Leaks.mountsUnder(data.getParent(), data.resolve("pool")));
    }
}
