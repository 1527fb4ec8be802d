package io.csi4j.driver.reconcile;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.Page;
import io.csi4j.driver.model.SnapshotFilter;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeKind;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.plugin.Driver;
import io.csi4j.driver.snapshot.GroupSnapshots;
import io.csi4j.driver.testing.ContentPattern;
import io.csi4j.driver.volume.AccessMode;
import io.csi4j.driver.volume.Capability;
import io.csi4j.driver.volume.CapacityRange;
import io.csi4j.driver.volume.NewVolume;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.stream.Collectors;

/**
 * Run in a child JVM by {@link CrashSafetyTest}: opens the driver on a shared data directory (the
 * reconciler runs), first retries the operation the previous child was killed in (if any), then runs
 * random domain operations until it is SIGKILLed. Before each operation it prints {@code BEGIN ...}
 * with everything needed to repeat it, after it {@code ACK ...} with what it made; both flushed.
 *
 * <pre>
 * BEGIN create NAME KIND SIZE SEED       ACK create NAME VOLUME_ID SEED
 * BEGIN clone NAME SOURCE_VOL KIND SIZE  ACK clone NAME VOLUME_ID SOURCE_VOL
 * BEGIN restore NAME SNAP KIND SIZE      ACK restore NAME VOLUME_ID SNAP
 * BEGIN snapshot NAME VOL                ACK snapshot NAME SNAP_ID VOL
 * BEGIN group NAME VOL,VOL               ACK group NAME GROUP_ID SNAP:VOL,SNAP:VOL
 * BEGIN expand VOL SIZE                  ACK expand VOL CAPACITY
 * BEGIN delvol VOL | delsnap SNAP | delgroup GROUP     ACK delvol VOL ...
 * </pre>
 * A new volume gets the pattern of SEED written into its image before it is acknowledged.
 */
public final class StorageCrashChild {
    static final String NODE = "crash-node";
    private static final int MAX_VOLUMES = 10;
    private static final int MAX_SNAPSHOTS = 12;
    private static final int MAX_GROUPS = 3;

    private final Driver driver;
    private final Random random;
    private final String prefix;
    private int counter;

    private StorageCrashChild(Driver driver, Random random, String prefix) {
        this.driver = driver;
        this.random = random;
        this.prefix = prefix;
    }

    static DriverConfig config(Path dataDir, long poolSize) {
        DriverConfig d = DriverConfig.defaults(dataDir, NODE);
        return new DriverConfig(d.dataDir(), d.nodeId(), d.engine(), OptionalLong.of(poolSize), d.mode(),
                d.maxVolumesPerNode(), d.defaultVolumeBytes(), d.overcommitRatio(), d.groupDeletePolicy(),
                d.oneGroupPerVolume(), d.maxGroupMembers());
    }

    /** args: data-dir pool-size seed prefix [retry-line] ["exit"]. */
    public static void main(String[] args) {
        Path dataDir = Path.of(args[0]);
        long poolSize = Long.parseLong(args[1]);
        long seed = Long.parseLong(args[2]);
        String prefix = args[3];
        String retry = args.length > 4 && !args[4].isEmpty() ? args[4] : null;
        boolean exitAfterRetry = args.length > 5 && args[5].equals("exit");
        try (Driver driver = Driver.open(config(dataDir, poolSize))) {
            var report = driver.reconcileReport();
            say("RECONCILED " + report.rolledBack().size() + " " + report.finished().size() + " " + report.removedTemporary().size()
                    + " " + report.swept().size() + " " + report.remade().size());
            say("OPEN");
            var child = new StorageCrashChild(driver, new Random(seed), prefix);
            if (retry != null) child.perform(retry.substring("BEGIN ".length()).split(" "));
            if (exitAfterRetry) return;
            for (;;) child.perform(child.next());
        } catch (Throwable t) {
            System.out.println("FAIL " + t.toString().replace('\n', ' '));
            System.out.flush();
            t.printStackTrace();
            System.exit(1);
        }
    }

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    // ---- choosing the next operation from what the catalog holds now ----

    private String[] next() {
        List<VolumeRecord> volumes = readyVolumes();
        List<SnapshotRecord> snapshots = readySnapshots();
        List<SnapshotRecord> single = snapshots.stream().filter(s -> s.groupSnapshotId() == null).toList();
        List<String> groups = snapshots.stream().map(SnapshotRecord::groupSnapshotId).filter(g -> g != null).distinct().toList();
        String name = prefix + "-" + counter++;
        if (volumes.size() > MAX_VOLUMES) return op("delvol", pick(volumes).id());
        if (single.size() > MAX_SNAPSHOTS) return op("delsnap", pick(single).id());
        if (groups.size() > MAX_GROUPS) return op("delgroup", pick(groups));
        int dice = random.nextInt(100);
        if (volumes.isEmpty() || dice < 22) {
            String kind = random.nextInt(10) < 7 ? "BLOCK" : "FILESYSTEM";
            long size = ContentPattern.MIN_SIZE + (random.nextInt(17) << 20);
            return op("create", name, kind, Long.toString(size), Long.toString(random.nextLong()));
        }
        if (dice < 38) return op("snapshot", name, pick(volumes).id());
        if (dice < 48) {
            VolumeRecord source = pick(volumes);
            long size = source.capacityBytes() + (random.nextBoolean() ? 0 : (random.nextInt(8) + 1) << 20);
            return op("clone", name, source.id(), source.kind().name(), Long.toString(size));
        }
        if (dice < 58 && !snapshots.isEmpty()) {
            SnapshotRecord source = pick(snapshots);
            String kind = driver.catalog().volumes().byId(source.sourceVolumeId()).map(v -> v.kind().name()).orElse("BLOCK");
            long size = source.sizeBytes() + (random.nextBoolean() ? 0 : (random.nextInt(8) + 1) << 20);
            return op("restore", name, source.id(), kind, Long.toString(size));
        }
        if (dice < 68) {
            VolumeRecord v = pick(volumes);
            return op("expand", v.id(), Long.toString(v.capacityBytes() + ((random.nextInt(8) + 1) << 20)));
        }
        if (dice < 74 && volumes.size() >= 2) {
            var members = new ArrayList<>(volumes);
            java.util.Collections.shuffle(members, random);
            int n = 2 + random.nextInt(Math.min(3, members.size() - 1));
            return op("group", name, members.subList(0, n).stream().map(VolumeRecord::id).collect(Collectors.joining(",")));
        }
        if (dice < 84) return op("delvol", pick(volumes).id());
        if (dice < 94 && !single.isEmpty()) return op("delsnap", pick(single).id());
        if (!groups.isEmpty()) return op("delgroup", pick(groups));
        return op("snapshot", name, pick(volumes).id());
    }

    private static String[] op(String... parts) {
        return parts;
    }

    private <T> T pick(List<T> items) {
        return items.get(random.nextInt(items.size()));
    }

    private List<VolumeRecord> readyVolumes() {
        var all = new ArrayList<VolumeRecord>();
        Page<VolumeRecord> page;
        long after = 0;
        do {
            page = driver.volumes().reads().list(after, 500);
            page.items().stream().filter(v -> v.state() == State.READY).forEach(all::add);
            after = page.lastSeq();
        } while (page.more());
        return all;
    }

    private List<SnapshotRecord> readySnapshots() {
        var all = new ArrayList<SnapshotRecord>();
        Page<SnapshotRecord> page;
        long after = 0;
        do {
            page = driver.snapshots().list(after, 500, new SnapshotFilter(null, null));
            page.items().stream().filter(s -> s.state() == State.READY).forEach(all::add);
            after = page.lastSeq();
        } while (page.more());
        return all;
    }

    // ---- performing one operation (also a retry of the one a kill interrupted) ----

    private void perform(String[] op) {
        say("BEGIN " + String.join(" ", op));
        String ack = switch (op[0]) {
            case "create" -> {
                VolumeRecord v = newVolume(op[1], op[2], Long.parseLong(op[3]), ContentSource.NONE);
                long seed = Long.parseLong(op[4]);
                ContentPattern.write(image(v.id()), seed);
                yield v.id() + " " + seed;
            }
            case "clone" -> newVolume(op[1], op[3], Long.parseLong(op[4]), new ContentSource.FromVolume(op[2])).id() + " " + op[2];
            case "restore" -> newVolume(op[1], op[3], Long.parseLong(op[4]), new ContentSource.FromSnapshot(op[2])).id() + " " + op[2];
            case "snapshot" -> driver.snapshots().create(op[1], op[2], Map.of()).id() + " " + op[2];
            case "group" -> {
                GroupSnapshots.GroupSnapshot g = driver.groupSnapshots().create(op[1], Arrays.asList(op[2].split(",")), Map.of());
                yield g.group().id() + " " + g.members().stream().map(s -> s.id() + ":" + s.sourceVolumeId())
                        .collect(Collectors.joining(","));
            }
            case "expand" -> Long.toString(driver.volumes().changes().expand(op[1], new CapacityRange(Long.parseLong(op[2]), 0)).capacityBytes());
            case "delvol" -> { driver.volumes().deletion().delete(op[1]); yield ""; }
            case "delsnap" -> { driver.snapshots().delete(op[1]); yield ""; }
            case "delgroup" -> { driver.groupSnapshots().delete(op[1], List.of()); yield ""; }
            default -> throw new IllegalArgumentException("unknown operation " + op[0]);
        };
        say(("ACK " + op[0] + " " + op[1] + " " + ack).strip());
    }

    private VolumeRecord newVolume(String name, String kind, long size, ContentSource source) {
        Capability capability = VolumeKind.valueOf(kind) == VolumeKind.BLOCK
                ? Capability.block(AccessMode.SINGLE_NODE_WRITER)
                : Capability.mount(AccessMode.SINGLE_NODE_WRITER, "ext4");
        return driver.volumes().creation().create(new NewVolume(name, new CapacityRange(size, 0), List.of(capability), Map.of(),
                Map.of(), source, Optional.empty()));
    }

    private Path image(String volumeId) {
        return driver.engine().pool().path().resolve("volumes").resolve(volumeId + ".img");
    }
}
