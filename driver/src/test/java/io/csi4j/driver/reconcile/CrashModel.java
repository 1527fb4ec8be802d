package io.csi4j.driver.reconcile;

import io.csi4j.driver.model.GroupSnapshotRecord;
import io.csi4j.driver.model.Page;
import io.csi4j.driver.model.SnapshotFilter;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.plugin.Driver;
import io.csi4j.driver.testing.ContentPattern;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * What the crash children acknowledged, and the check of a reconciled driver against it. Every
 * object carries the seed of the pattern it must hold: a new volume its own, a clone its source's,
 * a snapshot its volume's, a restore its snapshot's. The one operation a kill interrupted is in
 * doubt: it may have gone either way, but whatever it left must be complete.
 */
final class CrashModel {
    record Volume(long seed, long capacity) {}
    record Snapshot(long seed, String groupId) {}

    final Map<String, Volume> volumes = new TreeMap<>();
    final Map<String, Snapshot> snapshots = new TreeMap<>();
    final Map<String, Set<String>> groups = new TreeMap<>();
    final Map<String, Integer> acks = new TreeMap<>();
    /** The BEGIN line (without "BEGIN ") of the operation a kill interrupted, or null. */
    String inDoubt;
    int verifiedObjects;
    /** What the children's reconcilers did at start-up, summed. */
    int rolledBack, finished, temporaryRemoved, swept, remade;

    /** Applies one complete line a child printed. */
    void apply(String line) {
        String[] p = line.split(" ");
        switch (p[0]) {
            case "OPEN" -> {}
            case "RECONCILED" -> {
                rolledBack += Integer.parseInt(p[1]);
                finished += Integer.parseInt(p[2]);
                temporaryRemoved += Integer.parseInt(p[3]);
                swept += Integer.parseInt(p[4]);     // files of deleted or never committed volumes
                remade += Integer.parseInt(p[5]);    // blank images re-made from their rows (only after a power cut)
            }
            case "BEGIN" -> inDoubt = line.substring("BEGIN ".length());
            case "ACK" -> {
                acknowledge(p);
                acks.merge(p[1], 1, Integer::sum);
                inDoubt = null;
            }
            case "FAIL" -> throw new AssertionError("child failed: " + line);
            default -> throw new AssertionError("unexpected line from child: " + line);
        }
    }

    private void acknowledge(String[] p) {
        switch (p[1]) {
            case "create" -> volumes.put(p[3], new Volume(Long.parseLong(p[4]), 0));
            case "clone" -> volumes.put(p[3], new Volume(known(volumes, p[4]).seed(), 0));
            case "restore" -> volumes.put(p[3], new Volume(known(snapshots, p[4]).seed(), 0));
            case "snapshot" -> snapshots.put(p[3], new Snapshot(known(volumes, p[4]).seed(), null));
            case "group" -> {
                var members = new TreeSet<String>();
                for (String pair : p[4].split(",")) {
                    String[] sv = pair.split(":");
                    snapshots.put(sv[0], new Snapshot(known(volumes, sv[1]).seed(), p[3]));
                    members.add(sv[0]);
                }
                groups.put(p[3], members);
            }
            case "expand" -> volumes.put(p[2], new Volume(known(volumes, p[2]).seed(), Long.parseLong(p[3])));
            case "delvol" -> volumes.remove(p[2]);
            case "delsnap" -> snapshots.remove(p[2]);
            case "delgroup" -> {
                Set<String> members = groups.remove(p[2]);
                if (members != null) members.forEach(snapshots::remove);
            }
            default -> throw new AssertionError("unknown ack " + String.join(" ", p));
        }
    }

    private static <T> T known(Map<String, T> objects, String id) {
        T found = objects.get(id);
        if (found == null) throw new AssertionError("a child used " + id + ", which was never acknowledged");
        return found;
    }

    /** Every violation of the crash-safety promise in a freshly opened (so reconciled) driver. */
    List<String> violations(Driver driver, Path dataDir) {
        var problems = new ArrayList<String>();
        var report = driver.reconcileReport();
        if (!report.clean()) problems.add("orphans after reconcile: " + report.summary());
        for (State s : List.of(State.CREATING, State.DELETING)) {
            driver.catalog().volumes().inState(s).forEach(v -> problems.add("volume " + v.id() + " left " + s));
            driver.catalog().snapshots().inState(s).forEach(v -> problems.add("snapshot " + v.id() + " left " + s));
            driver.catalog().groupSnapshots().inState(s).forEach(v -> problems.add("group " + v.id() + " left " + s));
        }
        Map<String, VolumeRecord> volumeRows = volumeRows(driver);
        Map<String, SnapshotRecord> snapshotRows = snapshotRows(driver);
        if (!volumeRows.keySet().equals(driver.engine().volumeArtifacts())) {
            problems.add("volume rows " + volumeRows.keySet() + " != artifacts " + driver.engine().volumeArtifacts());
        }
        if (!snapshotRows.keySet().equals(driver.engine().snapshotArtifacts())) {
            problems.add("snapshot rows " + snapshotRows.keySet() + " != artifacts " + driver.engine().snapshotArtifacts());
        }
        Path pool = driver.engine().pool().path();
        Doubt doubt = Doubt.of(inDoubt, groups);

        // every acknowledged object is there, complete, with its content
        volumes.forEach((id, expected) -> {
            if (doubt.mayBeGone(id)) return;
            VolumeRecord row = volumeRows.get(id);
            if (row == null) { problems.add("acknowledged volume " + id + " is gone"); return; }
            checkVolume(row, expected.seed(), pool, problems);
            if (expected.capacity() > row.capacityBytes()) {
                problems.add("volume " + id + " lost its acknowledged expansion to " + expected.capacity());
            }
        });
        snapshots.forEach((id, expected) -> {
            if (doubt.mayBeGone(id)) return;
            SnapshotRecord row = snapshotRows.get(id);
            if (row == null) { problems.add("acknowledged snapshot " + id + " is gone"); return; }
            checkSnapshot(row, expected.seed(), pool, problems);
            if (!java.util.Objects.equals(expected.groupId(), row.groupSnapshotId())) {
                problems.add("snapshot " + id + " belongs to group " + row.groupSnapshotId() + ", not " + expected.groupId());
            }
        });
        groups.forEach((id, members) -> {
            if (doubt.mayBeGone(id)) return;
            Optional<GroupSnapshotRecord> row = driver.catalog().groupSnapshots().byId(id);
            if (row.isEmpty()) { problems.add("acknowledged group snapshot " + id + " is gone"); return; }
            var actual = new TreeSet<String>();
            driver.catalog().snapshots().ofGroup(id).forEach(s -> actual.add(s.id()));
            if (!actual.equals(members)) problems.add("group " + id + " has members " + actual + ", not " + members);
            verifiedObjects++;
        });

        // nothing else exists but the one operation in doubt, and what it made is complete
        volumeRows.values().forEach(row -> {
            if (volumes.containsKey(row.id())) return;
            if (!doubt.made(row.name())) { problems.add("unacknowledged volume " + row.id() + " (" + row.name() + ") exists"); return; }
            checkVolume(row, doubt.seed(this, row), pool, problems);
        });
        snapshotRows.values().forEach(row -> {
            if (snapshots.containsKey(row.id())) return;
            String name = row.groupSnapshotId() == null ? row.name()
                    : driver.catalog().groupSnapshots().byId(row.groupSnapshotId()).map(GroupSnapshotRecord::name).orElse("?");
            if (!doubt.made(name)) { problems.add("unacknowledged snapshot " + row.id() + " (" + name + ") exists"); return; }
            Volume source = volumes.get(row.sourceVolumeId());
            checkSnapshot(row, source == null ? null : source.seed(), pool, problems);
        });
        groupRows(driver).forEach(g -> {
            if (!groups.containsKey(g.id()) && !doubt.made(g.name())) problems.add("unacknowledged group snapshot " + g.id() + " exists");
        });

        problems.addAll(leftovers(pool, dataDir));
        return problems;
    }

    private void checkVolume(VolumeRecord row, Long seed, Path pool, List<String> problems) {
        Path image = pool.resolve("volumes").resolve(row.id() + ".img");
        if (row.state() != State.READY) problems.add("volume " + row.id() + " is " + row.state());
        long size = size(image);
        if (size != row.capacityBytes()) {
            problems.add("volume " + row.id() + " has capacity " + row.capacityBytes() + " but its image " + size + " bytes");
        }
        if (seed != null) ContentPattern.mismatch(image, seed).ifPresent(problems::add);
        verifiedObjects++;
    }

    private void checkSnapshot(SnapshotRecord row, Long seed, Path pool, List<String> problems) {
        Path image = pool.resolve("snapshots").resolve(row.id() + ".img");
        if (row.state() != State.READY) problems.add("snapshot " + row.id() + " is " + row.state());
        long size = size(image);
        if (size != row.sizeBytes()) problems.add("snapshot " + row.id() + " has size " + row.sizeBytes() + " but its image " + size);
        if (seed != null) ContentPattern.mismatch(image, seed).ifPresent(problems::add);
        verifiedObjects++;
    }

    /** Temp files, sidecars without artifacts (or the reverse), loop devices and mounts beyond the pool's own. */
    private static List<String> leftovers(Path pool, Path dataDir) {
        var problems = new ArrayList<String>();
        try (Stream<Path> tmp = Files.list(pool.resolve(".tmp"))) {
            tmp.forEach(p -> problems.add("temporary file left: " + p));
            for (String dir : List.of("volumes", "snapshots")) {
                var names = new TreeSet<String>();
                try (Stream<Path> entries = Files.list(pool.resolve(dir))) {
                    entries.forEach(p -> names.add(p.getFileName().toString()));
                }
                for (String name : names) {
                    String base = name.replaceFirst("\\.(img|meta)$", "");
                    if (name.equals(base)) problems.add("stray file " + dir + "/" + name);
                    else if (!names.contains(base + ".img") || !names.contains(base + ".meta")) {
                        problems.add(dir + "/" + name + " has no partner (artifact without sidecar or the reverse)");
                    }
                }
            }
            try (Stream<Path> top = Files.list(dataDir)) {
                top.filter(p -> p.getFileName().toString().contains(".tmp")).forEach(p -> problems.add("temporary file left: " + p));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<LoopDevice> loops = LoopDevice.list().stream().filter(d -> d.backingFile().startsWith(dataDir)).toList();
        if (loops.size() != 1 || !loops.getFirst().backingFile().getFileName().toString().equals("pool.img")) {
            problems.add("loop devices under the data directory: " + loops + " (only the pool's expected)");
        }
        List<Path> mounts = MountTable.read().under(dataDir).stream().map(MountInfo::mountPoint).toList();
        if (!mounts.equals(List.of(pool))) problems.add("mounts under the data directory: " + mounts + " (only the pool expected)");
        return problems;
    }

    private static long size(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return -1;
        }
    }

    static Map<String, VolumeRecord> volumeRows(Driver driver) {
        var rows = new TreeMap<String, VolumeRecord>();
        long after = 0;
        Page<VolumeRecord> page;
        do {
            page = driver.catalog().volumes().page(after, 500);
            page.items().forEach(v -> rows.put(v.id(), v));
            after = page.lastSeq();
        } while (page.more());
        return rows;
    }

    static Map<String, SnapshotRecord> snapshotRows(Driver driver) {
        var rows = new TreeMap<String, SnapshotRecord>();
        long after = 0;
        Page<SnapshotRecord> page;
        do {
            page = driver.catalog().snapshots().page(after, 500, new SnapshotFilter(null, null));
            page.items().forEach(s -> rows.put(s.id(), s));
            after = page.lastSeq();
        } while (page.more());
        return rows;
    }

    static List<GroupSnapshotRecord> groupRows(Driver driver) {
        var rows = new ArrayList<GroupSnapshotRecord>();
        long after = 0;
        Page<GroupSnapshotRecord> page;
        do {
            page = driver.catalog().groupSnapshots().page(after, 500);
            rows.addAll(page.items());
            after = page.lastSeq();
        } while (page.more());
        return rows;
    }

    /** The operation in doubt: what it may have removed, and what it may have made (by name). */
    record Doubt(String[] op, Set<String> removable) {
        static Doubt of(String line, Map<String, Set<String>> groups) {
            if (line == null) return new Doubt(new String[] {""}, Set.of());
            String[] op = line.split(" ");
            Set<String> removable = new TreeSet<>();
            switch (op[0]) {
                case "delvol", "delsnap" -> removable.add(op[1]);
                case "delgroup" -> {
                    removable.add(op[1]);
                    removable.addAll(groups.getOrDefault(op[1], Set.of()));
                }
                default -> {}
            }
            return new Doubt(op, removable);
        }

        boolean mayBeGone(String id) {
            return removable.contains(id);
        }

        /** Whether an object of this name may be the in-doubt operation's work. */
        boolean made(String name) {
            return op.length > 1 && !op[0].startsWith("del") && !op[0].equals("expand") && op[1].equals(name);
        }

        /** The seed a volume the in-doubt operation made must hold (null: unknown, e.g. a create not yet written). */
        Long seed(CrashModel model, VolumeRecord row) {
            return switch (op[0]) {
                case "clone" -> Optional.ofNullable(model.volumes.get(op[2])).map(Volume::seed).orElse(null);
                case "restore" -> Optional.ofNullable(model.snapshots.get(op[2])).map(Snapshot::seed).orElse(null);
                default -> null;
            };
        }
    }
}
