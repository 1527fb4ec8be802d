package io.csi4j.cli.reliability;

import io.csi4j.cli.reliability.World.Vol;
import io.csi4j.proto.addons.volumegroup.ListVolumeGroupsRequest;
import io.csi4j.proto.csi.ListSnapshotsRequest;
import io.csi4j.proto.csi.ListVolumesRequest;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What a machine booted on a {@link PowerCut} clone must show, held against the clients' {@link World} models and
 * the {@link RecordLog}s: after kubelet's re-stage (the node's mounts went with the power) and the CO's retries,
 * every acknowledged object with its id and attributes, nothing the model does not own (image, sidecar, temporary
 * file), every fsynced record, and volume filesystems that check clean. Failures say "lost" or "leaked".
 */
final class PowerCutChecks {
    private final PowerCut disk;
    private final Path node;
    private final List<World> worlds;
    private final List<LogVolume> logs;
    private final Collection<String> failures;
    private long cuts, objects, records, filesystems, retried, reboots, reformats;
    /** The clone as the power cut left it, before any plugin ran on it: for a "lost" volume's diagnosis. */
    private BootState boot;
    private String reconciled = "";

    PowerCutChecks(PowerCut disk, Path node, List<World> worlds, List<LogVolume> logs, Collection<String> failures) {
        this.disk = disk;
        this.node = node;
        this.worlds = worlds;
        this.logs = logs;
        this.failures = failures;
    }

    /** The checks of a fresh machine (a soak's {@code csi4j.powercut.machine-cuts}), its counts carried over from these. */
    PowerCutChecks onNextMachine(PowerCut disk, Path node, List<World> worlds, List<LogVolume> logs) {
        var next = new PowerCutChecks(disk, node, worlds, logs, failures);
        next.cuts = cuts;
        next.objects = objects;
        next.records = records;
        next.filesystems = filesystems;
        next.retried = retried;
        next.reboots = reboots;
        next.reformats = reformats;
        return next;
    }

    private Path pool() {
        return disk.data.resolve("pool");
    }

    /** Before any plugin runs on the clone: the ext4 log volume's filesystem, as the cut left it, checks clean. */
    void filesystems() throws IOException {
        cuts++;
        boot = BootState.of(disk, pool());
        for (LogVolume log : logs) if (!log.block) fsck(log.id, "ext4");
    }

    /**
     * After the reboot's stage: one staged XFS volume checks clean. Not before: an XFS grow cut short leaves stale
     * secondary superblocks that the next stage rewrites (the kernel never reads them; xfs_repair would).
     */
    private void stagedFilesystem(Random random) throws IOException {
        List<Vol> staged = worlds.stream().flatMap(w -> w.volumes.values().stream()).filter(v -> v.staged).toList();
        if (!staged.isEmpty()) fsck(staged.get(random.nextInt(staged.size())).id, "xfs");
    }

    private void fsck(String volumeId, String fsType) throws IOException {
        Path image = pool().resolve("volumes").resolve(volumeId + ".img");
        if (!Files.exists(image)) {
            failures.add("lost: the image of staged volume " + volumeId + " is not on the disk after the cut");
            return;
        }
        filesystems++;
        String problem = disk.checkFilesystem(image, fsType);
        if (problem != null) failures.add("lost: the " + fsType + " filesystem of volume " + volumeId + " is damaged: " + problem);
    }

    /** The fresh plugin started on its own; kubelet stages and publishes again, the CO retries, then every check. */
    void afterBoot(Plugin plugin, int cut, Random random) throws IOException {
        reboots++;
        reconciled = plugin.stderr().lines().filter(l -> l.contains("reconciled:")).reduce("", (a, b) -> a + b + "\n").strip();
        if (plugin.stderr().contains("orphans:")) failures.add("leaked: cut " + cut + ", the restart found orphans: " + plugin.stderr());
        var rpc = new Rpc(plugin.channel(), plugin.addonsChannel());
        for (LogVolume log : logs) log.mount(rpc);
        for (World w : worlds) reboot(w, rpc, cut);
        if (plugin.stderr().contains("its format was cut short")) reformats++;   // a cut in mkfs, redone (finding 4)
        if (failures.isEmpty()) stagedFilesystem(random);
        if (failures.isEmpty()) invariants(rpc, cut);
    }

    /** The node's mounts are gone: what was (being) staged or published is staged and published again, then retries. */
    private void reboot(World w, Rpc rpc, int cut) throws IOException {
        Map<Vol, boolean[]> wanted = new HashMap<>();   // {staged, published}
        for (Vol v : w.volumes.values()) {
            wanted.put(v, new boolean[] {v.staged, v.published});
            v.staged = v.published = false;
        }
        World.Op pending = w.pending;
        w.pending = null;
        if (pending != null && pending.label().startsWith("Node")) {
            String[] words = pending.label().split(" ");
            boolean[] want = wanted.get(w.byId(words[1]));
            switch (words[0]) {
                case "NodeStageVolume" -> want[0] = true;
                case "NodePublishVolume" -> want[0] = want[1] = true;
                case "NodeUnpublishVolume" -> want[1] = false;
                case "NodeUnstageVolume" -> want[0] = want[1] = false;
                default -> throw new IllegalStateException(pending.label());
            }
            pending = null;
        }
        for (var e : wanted.entrySet()) {
            Vol v = e.getKey();
            World.Op op = null;
            try {
                if (e.getValue()[0]) (op = w.stage(v)).step().run(rpc);
                if (e.getValue()[1]) (op = w.publish(v)).step().run(rpc);
            } catch (StatusRuntimeException failed) {
                failures.add("lost: cut " + cut + ", kubelet's " + op.label() + " (" + v.name + ") after the reboot answered "
                        + failed.getStatus() + "\n" + diagnosis(w, v));
                return;
            }
        }
        if (pending == null) return;
        retried++;
        try {
            pending.step().run(rpc);
            w.record(pending.label() + ": retried after cut " + cut + ", OK");
        } catch (StatusRuntimeException e) {
            failures.add(w.prefix + ": the retry of " + pending.label() + " after the cut answered " + e.getStatus());
        }
    }

    /** What a failed re-stage needs for its diagnosis: the client's last operations and the image as the cut left it. */
    private String diagnosis(World w, Vol v) {
        StringBuilder out = new StringBuilder(w.prefix + "'s last operations (oldest first):\n  " + String.join("\n  ", w.history));
        out.append("\nvolume ").append(v.id).append(": capacity ").append(v.capacity).append(", in the model staged=")
                .append(v.staged).append(" published=").append(v.published);
        try {
            out.append("\n").append(disk.describeXfs(pool().resolve("volumes").resolve(v.id + ".img")));
        } catch (IOException | RuntimeException e) {
            out.append("\n(the image could not be examined: ").append(e.getMessage()).append(")");
        }
        return out.toString();
    }

    /** Records: every one acknowledged before the cut, exactly as written, and none of this log after a gap. */
    void records(LogVolume log, RecordLog writer, long ackedBeforeCut, long issued) throws IOException {
        if (writer.error() != null) failures.add(log.name + ": the writer failed before the cut: " + writer.error());
        Path path = writer.path;
        RecordLog.Found found = Files.exists(path) ? RecordLog.read(path, writer.seed, issued + 16) : new RecordLog.Found(0, 0, -1);
        records += Math.min(found.prefix(), ackedBeforeCut);
        if (found.prefix() < ackedBeforeCut) {
            failures.add("lost: " + log.name + " holds " + found.prefix() + " whole records from the start, " + ackedBeforeCut
                    + " were fsynced before the cut (" + issued + " written)");
        }
        if (found.strays() > 0) {
            failures.add("lost: " + log.name + " shows " + found.strays() + " records after a gap at " + found.prefix()
                    + " (first at " + found.firstStray() + ")");
        }
        if (!log.block) Files.deleteIfExists(path);
    }

    private void invariants(Rpc rpc, int cut) throws IOException {
        Map<String, Long> expected = new TreeMap<>();
        Set<String> attached = new TreeSet<>();
        Set<String> expectedSnapshots = new TreeSet<>();
        Map<String, Set<String>> expectedGroups = new TreeMap<>();
        int staged = 0, published = 0;
        for (LogVolume log : logs) {
            expected.put(log.id, log.capacity);
            attached.add(log.id);
        }
        for (World w : worlds) {
            for (Vol v : w.volumes.values()) {
                expected.put(v.id, v.capacity);
                if (v.attached) attached.add(v.id);
                if (v.staged) staged++;
                if (v.published) {
                    published++;
                    Path file = w.target(v).resolve(World.DATA_FILE);
                    String actual = Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : null;
                    objects++;
                    if (!Objects.equals(actual, v.data)) failures.add("lost: volume " + v.id + " reads back " + actual + ", written " + v.data);
                }
                if (v.staged && v.readAheadKiB != null) readAhead(v);
            }
            expectedSnapshots.addAll(w.snapshotIds());
            w.groups.values().forEach(g -> expectedGroups.put(g.id(), new TreeSet<>(g.members())));
        }
        Map<String, Long> listed = new TreeMap<>();
        Set<String> listedAttached = new TreeSet<>();
        String token = "";
        do {
            var page = rpc.controller().listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(7).setStartingToken(token).build());
            for (var e : page.getEntriesList()) {
                listed.put(e.getVolume().getVolumeId(), e.getVolume().getCapacityBytes());
                if (e.getStatus().getPublishedNodeIdsList().contains(World.NODE)) listedAttached.add(e.getVolume().getVolumeId());
            }
            token = page.getNextToken();
        } while (!token.isEmpty());
        if (!expected.equals(listed)) {
            failures.add("lost or leaked volumes (id=capacity): the plugin has " + listed + ", acknowledged " + expected
                    + volumeDiagnosis(expected, listed));
        }
        compare("ControllerPublish records", attached, listedAttached);
        Set<String> snapshots = rpc.controller().listSnapshots(ListSnapshotsRequest.getDefaultInstance()).getEntriesList()
                .stream().map(e -> e.getSnapshot().getSnapshotId()).collect(Collectors.toCollection(TreeSet::new));
        compare("snapshots", expectedSnapshots, snapshots);
        if (rpc.hasVolumeGroups()) {
            Map<String, Set<String>> groups = new TreeMap<>();
            rpc.volumeGroups().listVolumeGroups(ListVolumeGroupsRequest.getDefaultInstance()).getEntriesList()
                    .forEach(e -> groups.put(e.getVolumeGroup().getVolumeGroupId(), e.getVolumeGroup().getVolumesList()
                            .stream().map(v -> v.getVolumeId()).collect(Collectors.toCollection(TreeSet::new))));
            compare("volume groups", expectedGroups, groups);
        }
        objects += expected.size() + attached.size() + expectedSnapshots.size() + expectedGroups.size();
        artifacts("volumes", expected.keySet());
        artifacts("snapshots", expectedSnapshots);
        for (String dir : List.of(".tmp", "replicas")) {
            Path d = pool().resolve(dir);
            if (Files.isDirectory(d)) try (Stream<Path> left = Files.list(d)) {
                List<Path> files = left.toList();
                if (!files.isEmpty()) failures.add("leaked: cut " + cut + ", files in " + d + ": " + files);
            }
        }
        int loops = Leaks.loopsUnder(pool()).size();
        if (loops != staged + logs.size()) failures.add("leaked: " + loops + " loop devices for " + (staged + logs.size()) + " staged volumes");
        long mounts = Leaks.mountsUnder(node, null).stream().filter(m -> logs.stream().noneMatch(l -> m.startsWith(node.resolve(l.name)))).count();
        if (mounts != staged + published) failures.add("leaked: " + mounts + " mounts for " + staged + " staged and " + published + " published");
    }

    private void readAhead(Vol v) throws IOException {
        objects++;
        for (String loop : Leaks.loopsUnder(pool())) {
            if (!loop.endsWith("/" + v.id + ".img")) continue;
            Path setting = Path.of("/sys/block", loop.substring(0, loop.indexOf('=')), "queue/read_ahead_kb");
            String actual = Files.readString(setting).strip();
            if (!actual.equals(v.readAheadKiB)) {
                failures.add("lost: volume " + v.id + " staged with read-ahead " + actual + " KiB, ModifyVolume set " + v.readAheadKiB);
            }
            return;
        }
        failures.add("lost: staged volume " + v.id + " has no loop device");
    }

    private <T> void compare(String what, T expected, T actual) {
        if (!expected.equals(actual)) failures.add("lost or leaked " + what + ": the plugin has " + actual + ", acknowledged " + expected);
    }

    /**
     * Where each volume the model and the plugin disagree on came from and went: its client's last operations (or,
     * for an id no client knows, every client's), its row and files on the clone before the boot, and the
     * start-up's reconcile line. A row missing or not READY on the clone with an acknowledged create or expansion
     * points at durability (the plugin, or the harness's clone); a READY row there points at the booted plugin
     * (its reconciler, or a retry); an operation in the history that deletes it points at the model.
     */
    private String volumeDiagnosis(Map<String, Long> expected, Map<String, Long> listed) {
        Set<String> differing = new TreeSet<>(expected.keySet());
        differing.addAll(listed.keySet());
        differing.removeIf(id -> Objects.equals(expected.get(id), listed.get(id)));
        StringBuilder out = new StringBuilder();
        for (String id : differing) {
            out.append("\n").append(id).append(!listed.containsKey(id) ? " (acknowledged, not listed)"
                    : !expected.containsKey(id) ? " (listed, not acknowledged)" : " (capacity differs)");
            out.append("\n  on the clone before the boot: ").append(boot == null ? "?" : boot.describe(id));
            List<World> owners = worlds.stream().filter(w -> w.volumes.values().stream().anyMatch(v -> id.equals(v.id))).toList();
            for (World w : owners.isEmpty() ? worlds : owners) {
                out.append("\n  ").append(w.prefix).append("'s last operations (oldest first):\n    ").append(String.join("\n    ", w.history));
            }
        }
        out.append("\nstart-up: ").append(reconciled.isEmpty() ? "no reconcile line (nothing rolled back or finished, no orphan)" : reconciled);
        return out.toString();
    }

    /**
     * The catalog and {@code pool/volumes} as the clone holds them before a plugin opens them: the catalog files are
     * copied aside (the copy is read only if a check fails; opening the original would recover its log in place).
     */
    record BootState(Path catalog, Set<String> files) {
        static BootState of(PowerCut disk, Path pool) {
            Path aside = disk.root.resolve("catalog-at-boot");
            Set<String> files = new TreeSet<>();
            try {
                Files.createDirectories(aside);
                try (Stream<Path> old = Files.list(aside)) {
                    for (Path p : old.toList()) Files.delete(p);
                }
                for (String name : List.of("catalog.db", "catalog.db-wal")) {
                    Path file = disk.data.resolve(name);
                    if (Files.exists(file)) Files.copy(file, aside.resolve(name));
                }
                Path volumes = pool.resolve("volumes");
                if (Files.isDirectory(volumes)) try (Stream<Path> listed = Files.list(volumes)) {
                    listed.forEach(p -> files.add(p.getFileName().toString()));
                }
            } catch (IOException e) {
                files.add("(not read: " + e.getMessage() + ")");
            }
            return new BootState(aside.resolve("catalog.db"), files);
        }

        String describe(String volumeId) {
            String row;
            try (var c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + catalog)) {
                row = sql(c, "SELECT state || ' ' || capacity_bytes || ' ' || source_kind || COALESCE(' ' || source_id, '') FROM volumes WHERE id = ?", volumeId)
                        .map(r -> "row " + r).orElse("no row");
                if (sql(c, "SELECT id FROM volume_tombstones WHERE id = ?", volumeId).isPresent()) row += ", a tombstone";
                row += sql(c, "SELECT group_concat(group_id) FROM volume_group_members WHERE volume_id = ?", volumeId)
                        .map(g -> ", in volume group " + g).orElse("");
            } catch (java.sql.SQLException | RuntimeException e) {
                row = "catalog not read (" + e.getMessage() + ")";
            }
            List<String> mine = files.stream().filter(f -> f.startsWith(volumeId + ".")).sorted().toList();
            return row + "; files " + (mine.isEmpty() ? "none" : mine);
        }

        private static java.util.Optional<String> sql(java.sql.Connection c, String query, String id) throws java.sql.SQLException {
            try (var statement = c.prepareStatement(query)) {
                statement.setString(1, id);
                try (var result = statement.executeQuery()) {
                    return result.next() ? java.util.Optional.ofNullable(result.getString(1)) : java.util.Optional.empty();
                }
            }
        }
    }

    /** Every image has its sidecar and a row the model knows, and the other way round. */
    private void artifacts(String dir, Set<String> expected) throws IOException {
        Map<String, Set<String>> bySuffix = new TreeMap<>();
        try (Stream<Path> files = Files.list(pool().resolve(dir))) {
            for (Path p : files.toList()) {
                String name = p.getFileName().toString();
                int dot = name.lastIndexOf('.');
                bySuffix.computeIfAbsent(dot < 0 ? "" : name.substring(dot), k -> new TreeSet<>()).add(dot < 0 ? name : name.substring(0, dot));
            }
        }
        for (var e : bySuffix.entrySet()) {
            if (!e.getValue().equals(expected)) failures.add("leaked or lost " + dir + "/*" + e.getKey() + ": " + e.getValue() + ", acknowledged " + expected);
        }
        if (!expected.isEmpty() && bySuffix.size() != 2) failures.add("lost: " + dir + " holds the suffixes " + bySuffix.keySet());
    }

    /** Everything deleted through the plugin: nothing may remain in the pool, the kernel or the lists. */
    void tearDown(Rpc rpc) throws IOException {
        for (LogVolume log : logs) {
            log.unmount(rpc);
            log.delete(rpc);
        }
        World.deleteEverything(worlds, rpc);
        List<LogVolume> none = List.of();
        var empty = new PowerCutChecks(disk, node, List.of(), none, failures);
        empty.invariants(rpc, -1);
        if (!Leaks.loopsUnder(pool()).isEmpty()) failures.add("leaked: loop devices after deleting everything: " + Leaks.loopsUnder(pool()));
    }

    void print(int cut, long answered, long started) {
        long lost = failures.stream().filter(f -> f.contains("lost")).count();
        long leaked = failures.stream().filter(f -> f.contains("leaked")).count();
        System.out.printf("power cut: %s%d cuts, %d operations acknowledged, %d retried after a cut, %d objects and %d fsynced records"
                + " checked, %d filesystems checked, %d formats cut short redone, lost %d, leaked %d, mean start-up %d ms, %.0f s%n",
                cut < 0 ? "done: " : "", cuts, answered, retried, objects, records, filesystems, reformats, lost, leaked,
                Plugin.meanStartMillis(), (System.nanoTime() - started) / 1e9);
    }
}
