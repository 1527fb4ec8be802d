package io.csi4j.cli.demo;

import io.csi4j.cli.call.Session;
import io.csi4j.cli.output.Views;
import io.csi4j.proto.addons.volumegroup.CreateVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.DeleteVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.ModifyVolumeGroupMembershipRequest;
import io.csi4j.proto.csi.*;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import io.grpc.Status;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.SequencedMap;

/**
 * The demo's steps, each one a CSI call (or a few) over the plugin's socket followed by a check of what it
 * did. A step that fails stops the walk; clean-up runs anyway.
 */
final class Walkthrough {
    static final String HELLO = "hello from csi4j\n";
    static final String CHANGED = "changed after the snapshot\n";
    static final long SIZE = 64L << 20;
    static final long EXPANDED = 128L << 20;

    private final Path workDir;
    private final long poolBytes;
    private final PrintWriter out;
    private DemoPlugin plugin;
    private Session csi;
    private final VolumeCapability cap = VolumeCapability.newBuilder()
            .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER))
            .setMount(VolumeCapability.MountVolume.newBuilder().setFsType("ext4")).build();

    private int number;
    private int failed;
    // what exists, for the clean-up step: volume name -> id, and the node paths in use
    private final SequencedMap<String, String> volumes = new LinkedHashMap<>();
    private final Map<String, Path> published = new LinkedHashMap<>();
    private final List<String> snapshots = new ArrayList<>();
    private String groupSnapshot;
    private List<String> groupMembers = List.of();
    private String volumeGroup;

    Walkthrough(Path workDir, long poolBytes, PrintWriter out) {
        this.workDir = workDir;
        this.poolBytes = poolBytes;
        this.out = out;
    }

    int failed() { return failed; }
    boolean started() { return plugin != null; }

    /** One step's body: does the work, checks it, and says what it found. Throws {@link Failed} when a check fails. */
    interface Body {
        String run() throws Exception;
    }

    static final class Failed extends RuntimeException {
        Failed(String message) {
            super(message);
        }
    }

    /** Runs one step unless an earlier one failed; prints its number, title, outcome, time and result. */
    boolean step(String title, Body body) {
        number++;
        if (failed > 0) {
            print(number, title, "--", 0, "not run (an earlier step failed)");
            return false;
        }
        return run(title, body);
    }

    /** Runs a step even after failures (clean-up). */
    boolean always(String title, Body body) {
        number++;
        return run(title, body);
    }

    private boolean run(String title, Body body) {
        long start = System.nanoTime();
        try {
            String result = body.run();
            print(number, title, "ok", System.nanoTime() - start, result);
            return true;
        } catch (StatusRuntimeException e) {
            failed++;
            print(number, title, "FAIL", System.nanoTime() - start, e.getStatus().getCode() + ": " + e.getStatus().getDescription());
        } catch (Exception | AssertionError e) {
            failed++;
            String why = e instanceof Failed || (e.getMessage() != null && e instanceof RuntimeException) ? e.getMessage() : e.toString();
            print(number, title, "FAIL", System.nanoTime() - start, why);
        }
        return false;
    }

    private void print(int n, String title, String outcome, long nanos, String result) {
        String time = nanos == 0 ? "" : nanos < 1_000_000_000L ? "%d ms".formatted(nanos / 1_000_000)
                : String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
        String[] lines = result.split("\n");
        out.println(String.format(Locale.ROOT, "%3d. %-38s %-4s %8s  %s", n, title, outcome, time, lines[0]));
        for (int i = 1; i < lines.length; i++) out.println(" ".repeat(59) + lines[i]);
        out.flush();
    }

    // ---- the steps ----

    String start() throws IOException {
        plugin = DemoPlugin.start(workDir, poolBytes);
        csi = new Session(plugin.endpoint(), Duration.ofSeconds(60));
        var info = csi.identity().getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
        var probe = csi.identity().probe(ProbeRequest.getDefaultInstance());
        check(probe.hasReady() ? probe.getReady().getValue() : true, "the plugin is not ready");
        var m = info.getManifestMap();
        check("yes".equals(m.get("reflink")), "the pool has no reflink: " + m);
        return "%s %s on %s\n%s engine, %s pool image with reflink: snapshots and clones are instant".formatted(
                info.getName(), info.getVendorVersion(), plugin.endpoint().uri(), m.get("engine"), m.get("pool-filesystem"));
    }

    String createVolumes() {
        var found = new ArrayList<String>();
        for (String name : List.of("alpha", "beta")) {
            Volume v = createVolume(name, null);
            check(v.getCapacityBytes() >= SIZE, name + " has " + v.getCapacityBytes() + " bytes, asked for " + SIZE);
            found.add("%s = %s (%s)".formatted(name, v.getVolumeId(), Views.bytes(v.getCapacityBytes())));
        }
        return String.join("\n", found);
    }

    String writeData() throws IOException {
        var lines = new ArrayList<String>();
        for (String name : List.of("alpha", "beta")) {
            Path target = stageAndPublish(name);
            Path file = target.resolve(name.equals("alpha") ? "hello.txt" : "beta.txt");
            write(file, name.equals("alpha") ? HELLO : "beta's own data\n", false);
            check(Files.readString(file).equals(name.equals("alpha") ? HELLO : "beta's own data\n"), "read back differs in " + file);
            lines.add("%s published at %s, wrote %s".formatted(name, target, file.getFileName()));
        }
        return String.join("\n", lines);
    }

    String snapshot() throws IOException {
        Snapshot s = csi.controller().createSnapshot(CreateSnapshotRequest.newBuilder().setName("alpha-snap")
                .setSourceVolumeId(volumes.get("alpha")).build()).getSnapshot();
        snapshots.add(s.getSnapshotId());
        check(s.getReadyToUse(), "snapshot " + s.getSnapshotId() + " is not ready to use");
        check(s.getSourceVolumeId().equals(volumes.get("alpha")), "snapshot source is " + s.getSourceVolumeId());
        // change alpha now, so that the clone (today's alpha) and the restore (the snapshot) differ
        write(published.get("alpha").resolve("hello.txt"), CHANGED, true);
        return "%s of alpha (%s), ready; alpha was frozen while it was cut\nthen appended to alpha/hello.txt: \"%s\"".formatted(
                s.getSnapshotId(), Views.bytes(s.getSizeBytes()), CHANGED.strip());
    }

    String cloneVolume() {
        Volume v = createVolume("alpha-clone", VolumeContentSource.newBuilder()
                .setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(volumes.get("alpha"))).build());
        check(v.getContentSource().getVolume().getVolumeId().equals(volumes.get("alpha")), "clone does not name alpha as its source");
        return "alpha-clone = %s, a copy-on-write clone of alpha as it is now".formatted(v.getVolumeId());
    }

    String restore() {
        Volume v = createVolume("alpha-restored", VolumeContentSource.newBuilder()
                .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snapshots.getFirst())).build());
        check(v.getContentSource().getSnapshot().getSnapshotId().equals(snapshots.getFirst()), "restore does not name the snapshot");
        return "alpha-restored = %s, alpha as it was at the snapshot".formatted(v.getVolumeId());
    }

    String group() {
        try (var s = new Session(plugin.addonsEndpoint(), Duration.ofSeconds(60))) {
            var vg = s.volumeGroups().createVolumeGroup(CreateVolumeGroupRequest.newBuilder().setName("demo-group")
                    .addVolumeIds(volumes.get("alpha")).addVolumeIds(volumes.get("beta")).build()).getVolumeGroup();
            volumeGroup = vg.getVolumeGroupId();
            var members = vg.getVolumesList().stream().map(Volume::getVolumeId).sorted().toList();
            check(members.equals(Stream.of(volumes.get("alpha"), volumes.get("beta")).sorted().toList()),
                    "group members are " + members);
            return "volume group %s with alpha and beta (CSI-Addons)".formatted(volumeGroup);
        }
    }

    String groupSnapshot() {
        var g = csi.group().createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder().setName("demo-group-snap")
                .addSourceVolumeIds(volumes.get("alpha")).addSourceVolumeIds(volumes.get("beta")).build()).getGroupSnapshot();
        groupSnapshot = g.getGroupSnapshotId();
        groupMembers = g.getSnapshotsList().stream().map(Snapshot::getSnapshotId).toList();
        check(g.getReadyToUse(), "group snapshot is not ready");
        check(g.getSnapshotsCount() == 2, "group snapshot has " + g.getSnapshotsCount() + " members, expected 2");
        var sources = g.getSnapshotsList().stream().map(Snapshot::getSourceVolumeId).sorted().toList();
        check(sources.equals(Stream.of(volumes.get("alpha"), volumes.get("beta")).sorted().toList()), "member sources are " + sources);
        check(g.getSnapshotsList().stream().allMatch(s -> s.getGroupSnapshotId().equals(groupSnapshot)), "a member lacks the group id");
        return "%s: %s; both volumes frozen, cut, thawed together (write-order consistent)".formatted(groupSnapshot,
                String.join(", ", groupMembers));
    }

    String publishAndShow() throws IOException {
        var lines = new ArrayList<String>();
        for (String name : List.of("alpha-restored", "alpha-clone")) {
            Path target = stageAndPublish(name);
            String expected = name.equals("alpha-restored") ? HELLO : HELLO + CHANGED;
            String actual = Files.readString(target.resolve("hello.txt"));
            check(actual.equals(expected), name + "/hello.txt holds \"" + actual.strip() + "\", expected \"" + expected.strip() + "\"");
            lines.add("$ ls -l " + target);
            try (Stream<Path> entries = Files.list(target)) {
                for (Path p : entries.sorted().toList()) {
                    lines.add(Files.isDirectory(p) ? "  %s/".formatted(p.getFileName())
                            : "  %-12s %4d B  \"%s\"".formatted(p.getFileName(), Files.size(p), Files.readString(p).strip().replace("\n", " / ")));
                }
            }
        }
        return String.join("\n", lines);
    }

    String expand() {
        String id = volumes.get("alpha");
        Path target = published.get("alpha");
        long before = bytesTotal(id, target);
        var r = csi.controller().controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(id)
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(EXPANDED)).setVolumeCapability(cap).build());
        check(r.getCapacityBytes() >= EXPANDED, "controller expanded to " + r.getCapacityBytes());
        String how = "online, while published";
        if (r.getNodeExpansionRequired()) {
            try {
                csi.node().nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(id).setVolumePath(target.toString())
                        .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(EXPANDED)).setVolumeCapability(cap).build());
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.FAILED_PRECONDITION) throw e;
                // the plugin cannot grow this filesystem while mounted (e.g. no CAP_SYS_RESOURCE for an
                // online ext4 resize): it grows it at the next stage, so unpublish, unstage and stage again
                unpublishAndUnstage("alpha");
                stageAndPublish("alpha");
                how = "offline at re-stage (the plugin refused online: " + firstSentence(e.getStatus().getDescription()) + ")";
            }
        }
        long after = bytesTotal(id, target);
        check(after >= before + (EXPANDED - SIZE) * 9 / 10, "the filesystem grew from " + before + " to " + after + " bytes only");
        check(Files.exists(target.resolve("hello.txt")), "alpha/hello.txt is gone after expansion");
        return "alpha: %s -> %s; its filesystem has %s (was %s)\ngrown %s".formatted(Views.bytes(SIZE),
                Views.bytes(r.getCapacityBytes()), Views.bytes(after), Views.bytes(before), how);
    }

    /** Removes everything the walk created, in dependency order, and checks that the plugin lists nothing. */
    String cleanUp() {
        var problems = new ArrayList<String>();
        for (String name : List.copyOf(published.keySet())) attempt(problems, () -> unpublishAndUnstage(name));
        if (groupSnapshot != null) {
            attempt(problems, () -> csi.group().deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder()
                    .setGroupSnapshotId(groupSnapshot).addAllSnapshotIds(groupMembers).build()));
        }
        for (String s : snapshots) {
            attempt(problems, () -> csi.controller().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(s).build()));
        }
        if (volumeGroup != null) {
            // empty the group first, so deleting it removes no volume the next lines would then miss
            try (var s = new Session(plugin.addonsEndpoint(), Duration.ofSeconds(60))) {
                attempt(problems, () -> s.volumeGroups().modifyVolumeGroupMembership(
                        ModifyVolumeGroupMembershipRequest.newBuilder().setVolumeGroupId(volumeGroup).build()));
                attempt(problems, () -> s.volumeGroups().deleteVolumeGroup(
                        DeleteVolumeGroupRequest.newBuilder().setVolumeGroupId(volumeGroup).build()));
            }
        }
        for (String id : volumes.sequencedValues().reversed()) {
            attempt(problems, () -> csi.controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build()));
        }
        int volumesLeft = csi.controller().listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesCount();
        int snapshotsLeft = csi.controller().listSnapshots(ListSnapshotsRequest.getDefaultInstance()).getEntriesCount();
        List<Path> mounts = plugin.mountsLeft();
        check(problems.isEmpty(), "clean-up calls failed: " + problems);
        check(volumesLeft == 0 && snapshotsLeft == 0, volumesLeft + " volumes and " + snapshotsLeft + " snapshots are left");
        check(mounts.isEmpty(), "still mounted: " + mounts);
        int n = volumes.size();
        int s = snapshots.size() + groupMembers.size();
        volumes.clear();
        snapshots.clear();
        return "unpublished, unstaged, deleted %d snapshots and %d volumes%s; the plugin lists none, nothing is mounted"
                .formatted(s, n, volumeGroup == null ? "" : " and the volume group");
    }

    /** Stops the plugin and removes its directory (pool unmounted first), then checks that it is gone. */
    String stop() {
        Path dir = plugin.dir();
        close();
        check(!Files.exists(dir), dir + " is still there");
        return "pool unmounted, " + dir + " removed";
    }

    /** Idempotent; also the last resort when a step threw. */
    void close() {
        if (csi != null) csi.close();
        csi = null;
        if (plugin != null) {
            DemoPlugin p = plugin;
            plugin = null;
            p.close();
        }
    }

    // ---- pieces ----

    private Volume createVolume(String name, VolumeContentSource source) {
        var req = CreateVolumeRequest.newBuilder().setName(name).addVolumeCapabilities(cap)
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(SIZE));
        if (source != null) req.setVolumeContentSource(source);
        Volume v = csi.controller().createVolume(req.build()).getVolume();
        volumes.put(name, v.getVolumeId());
        return v;
    }

    private Path stageAndPublish(String name) {
        String id = volumes.get(name);
        Path staging = staging(name);
        Path target = plugin.nodeDir().resolve("pods").resolve(name);
        csi.node().nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(staging.toString()).setVolumeCapability(cap).build());
        published.put(name, target);
        csi.node().nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(staging.toString()).setTargetPath(target.toString()).setVolumeCapability(cap).build());
        return target;
    }

    private void unpublishAndUnstage(String name) {
        String id = volumes.get(name);
        csi.node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id)
                .setTargetPath(published.get(name).toString()).build());
        csi.node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(staging(name).toString()).build());
        published.remove(name);
    }

    private static String firstSentence(String text) {
        if (text == null) return "";
        int end = text.indexOf(';');
        return end > 0 ? text.substring(0, end) : text;
    }

    private Path staging(String name) {
        return plugin.nodeDir().resolve("staging").resolve(name);
    }

    private long bytesTotal(String id, Path target) {
        return csi.node().nodeGetVolumeStats(NodeGetVolumeStatsRequest.newBuilder().setVolumeId(id).setVolumePath(target.toString())
                .build()).getUsageList().stream().filter(u -> u.getUnit() == VolumeUsage.Unit.BYTES)
                .mapToLong(VolumeUsage::getTotal).findFirst().orElseThrow(() -> new Failed("no byte usage reported"));
    }

    private static void write(Path file, String text, boolean append) throws IOException {
        try (var ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                append ? StandardOpenOption.APPEND : StandardOpenOption.TRUNCATE_EXISTING)) {
            ch.write(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
            ch.force(true);
        }
    }

    private static void attempt(List<String> problems, Runnable call) {
        try {
            call.run();
        } catch (StatusRuntimeException e) {
            problems.add(e.getStatus().getCode() + ": " + e.getStatus().getDescription());
        }
    }

    private static void check(boolean condition, String failure) {
        if (!condition) throw new Failed(failure);
    }
}
