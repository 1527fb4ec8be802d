package io.csi4j.cli.bench;

import io.csi4j.cli.call.Session;
import io.csi4j.proto.csi.*;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.stream.Stream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.LinkOption;
import java.nio.file.StandardOpenOption;
import java.util.Collection;
import java.util.SplittableRandom;
import java.util.concurrent.Semaphore;

/**
 * One bench run: set-up, prefill, the measured phase on {@code concurrency} virtual threads, clean-up.
 * Workers take numbered tickets until {@code requests} are handed out or {@code duration} has passed.
 */
final class BenchRun {
    /**
     * @param rate      iterations per second in all, started on schedule whatever the answers take (0: as fast as
     *                  the workers go)
     * @param fillBytes data written into each source volume (staged and published on this node) before measuring
     * @param groupSize volumes in each group snapshot
     */
    record Settings(String scenario, long requests, int concurrency, long prefill, Optional<Duration> duration,
                    long volumeBytes, VolumeCapability capability, Map<String, String> parameters, Map<String, String> secrets,
                    boolean progress, boolean terminal, double rate, long fillBytes, int groupSize) {}

    private final Session session;
    private final Settings settings;
    private final Workload workload;
    private final PrintWriter err;
    private final String runId = "bench-" + Long.toString(System.nanoTime() & 0xffffffL, 36) + Long.toString((long) (Math.random() * 36 * 36), 36);
    private final Ledger ledger = new Ledger();
    private final List<Path> removeAfterwards = new ArrayList<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicReference<String> firstFailure = new AtomicReference<>();

    BenchRun(Session session, Settings settings, Workload workload, PrintWriter err) {
        this.session = session;
        this.settings = settings;
        this.workload = workload;
        this.err = err;
    }

    Session session() { return session; }
    String runId() { return runId; }
    Ledger ledger() { return ledger; }
    int concurrency() { return settings.concurrency(); }
    int groupSize() { return settings.groupSize(); }
    VolumeCapability capability() { return settings.capability(); }
    Map<String, String> secrets() { return settings.secrets(); }
    Optional<String> firstFailure() { return Optional.ofNullable(firstFailure.get()); }

    void removeAfterwards(Path dir) {
        removeAfterwards.add(dir);
    }

    /** Asks the workers to stop after their current iteration (Ctrl-C). */
    void stop() {
        stop.set(true);
    }

    /** Runs everything and returns the figures; clean-up problems are reported through {@code cleanupFailures}. */
    BenchReport run(List<String> cleanupFailures) {
        String plugin = pluginName();
        String started = Instant.now().toString();
        try {
            workload.setUp(this);
            long prefillStart = System.nanoTime();
            if (settings.prefill() > 0) {
                phase("prefill", settings.prefill(), Optional.empty(), new Recorder[settings.concurrency()],
                        (ticket) -> createVolume(new Recorder(), runId + "-prefill-" + ticket));
            }
            double prefillSeconds = (System.nanoTime() - prefillStart) / 1e9;
            var recorders = new Recorder[settings.concurrency()];
            long start = System.nanoTime();
            long[] counts = phase(settings.scenario(), settings.requests(), settings.duration(), recorders, null);
            double elapsed = (System.nanoTime() - start) / 1e9;
            return report(plugin, started, prefillSeconds, counts[0], counts[1], elapsed, recorders);
        } finally {
            cleanupFailures.addAll(cleanUp());
        }
    }

    /** Runs tickets on the workers; returns {iterations done, iterations failed}. {@code task} null means the workload. */
    private long[] phase(String label, long requests, Optional<Duration> duration, Recorder[] recorders, Consumer<Long> task) {
        var tickets = new AtomicLong();
        var done = new AtomicLong();
        var failed = new AtomicLong();
        long deadline = duration.map(d -> System.nanoTime() + d.toNanos()).orElse(Long.MAX_VALUE);
        long start = System.nanoTime();
        try (ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor()) {
            var futures = new ArrayList<Future<?>>();
            for (int w = 0; w < settings.concurrency(); w++) {
                int worker = w;
                recorders[w] = new Recorder();
                futures.add(workers.submit(() -> {
                    while (!stop.get()) {
                        long ticket = tickets.getAndIncrement();
                        if ((requests > 0 && ticket >= requests) || System.nanoTime() >= deadline) break;
                        if (task == null && settings.rate() > 0) {
                            // open loop: ticket n starts at n/rate seconds, late answers do not slow the schedule
                            long due = start + (long) (ticket * 1e9 / settings.rate());
                            for (long wait; (wait = due - System.nanoTime()) > 0; ) LockSupport.parkNanos(wait);
                        }
                        try {
                            if (task != null) task.accept(ticket);
                            else workload.iteration(this, recorders[worker], worker, ticket);
                        } catch (RuntimeException e) {
                            failed.incrementAndGet();
                            firstFailure.compareAndSet(null, e instanceof StatusRuntimeException s ? s.getStatus().getCode() + ": "
                                    + s.getStatus().getDescription() : e.toString());
                        }
                        done.incrementAndGet();
                    }
                }));
            }
            long lastPrint = 0;
            while (futures.stream().anyMatch(f -> !f.isDone())) {
                sleep(100);
                long now = System.nanoTime();
                if (settings.progress() && now - lastPrint >= (settings.terminal() ? 250_000_000L : 5_000_000_000L)) {
                    progress(label, done.get(), failed.get(), requests, now - start, false);
                    lastPrint = now;
                }
            }
        }
        if (settings.progress()) progress(label, done.get(), failed.get(), requests, System.nanoTime() - start, true);
        return new long[] {done.get(), failed.get()};
    }

    private void progress(String label, long done, long failed, long requests, long nanos, boolean last) {
        double seconds = nanos / 1e9;
        String line = "%s: %d%s done, %.0f/s, %d failed, %.1f s".formatted(label, done, requests > 0 ? "/" + requests : "",
                seconds > 0 ? done / seconds : 0.0, failed, seconds);
        if (settings.terminal()) err.print("\r\033[K" + line + (last ? "\n" : ""));
        else err.println(line);
        err.flush();
    }

    /** CreateVolume with the run's size, capability and parameters; the new id is in the ledger before this returns. */
    String createVolume(Recorder r, String name) {
        return createVolume(r, name, null);
    }

    /** As {@link #createVolume(Recorder, String)}, from a content source (a clone or a restore) unless null. */
    String createVolume(Recorder r, String name, VolumeContentSource source) {
        var builder = CreateVolumeRequest.newBuilder().setName(name).addVolumeCapabilities(settings.capability())
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(settings.volumeBytes()))
                .putAllParameters(settings.parameters()).putAllSecrets(settings.secrets());
        if (source != null) builder.setVolumeContentSource(source);
        var req = builder.build();
        try {
            String id = r.call("CreateVolume", () -> session.controller().createVolume(req)).getVolume().getVolumeId();
            ledger.volumes.add(id);
            return id;
        } catch (StatusRuntimeException e) {
            if (mayHaveHappened(e)) ledger.uncertainVolumes.put(name, "");
            throw e;
        }
    }

    /** How this plugin's node side is driven: stage or not, controller-publish or not, and its node id. */
    record NodeAccess(boolean stage, boolean controllerPublish, String nodeId) {}

    private NodeAccess nodeAccess;
    private Path nodeRoot;

    /** Asked once per run. */
    synchronized NodeAccess nodeAccess() {
        if (nodeAccess == null) {
            var s = session;
            boolean stage = s.node().nodeGetCapabilities(NodeGetCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList()
                    .stream().anyMatch(c -> c.getRpc().getType() == NodeServiceCapability.RPC.Type.STAGE_UNSTAGE_VOLUME);
            boolean controllerPublish = s.controller().controllerGetCapabilities(ControllerGetCapabilitiesRequest.getDefaultInstance())
                    .getCapabilitiesList().stream()
                    .anyMatch(c -> c.getRpc().getType() == ControllerServiceCapability.RPC.Type.PUBLISH_UNPUBLISH_VOLUME);
            nodeAccess = new NodeAccess(stage, controllerPublish, s.node().nodeGetInfo(NodeGetInfoRequest.getDefaultInstance()).getNodeId());
        }
        return nodeAccess;
    }

    /** A directory of our own for staging and target paths (removed at clean-up). */
    synchronized Path nodeRoot() {
        if (nodeRoot == null) {
            try {
                nodeRoot = Files.createTempDirectory("csi4j-bench-");
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create a directory for staging and target paths", e);
            }
            removeAfterwards(nodeRoot);
        }
        return nodeRoot;
    }

    /**
     * Creates a volume, controller-publishes it when the plugin wants that, and enters where it will be staged
     * and published in the ledger; the caller stages and publishes.
     */
    String nodeVolume(Recorder r, String name) {
        String id = createVolume(r, name);
        Path dir = nodeRoot().resolve(name);
        try {
            Files.createDirectories(dir.resolve("staging"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ledger.nodePaths.put(id, new Ledger.NodePaths(dir.resolve("staging"), dir.resolve("target")));
        NodeAccess node = nodeAccess();
        if (node.controllerPublish()) {
            ledger.controllerPublished.put(id, node.nodeId());
            session.controller().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(id)
                    .setNodeId(node.nodeId()).setVolumeCapability(settings.capability()).putAllSecrets(settings.secrets()).build());
        }
        return id;
    }

    /**
     * The volume a snapshot, clone or restore scenario copies. With --fill it is staged and published on this
     * node and the data written into it (a file on a mount, the device itself on block) and synced; it stays
     * published while the scenario runs, so the plugin cuts it as it would a volume in use.
     */
    String sourceVolume(String name) {
        var setup = new Recorder();
        if (settings.fillBytes() == 0) return createVolume(setup, name);
        String id = nodeVolume(setup, name);
        var paths = ledger.nodePaths.get(id);
        NodeAccess node = nodeAccess();
        if (node.stage()) {
            session.node().nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id)
                    .setStagingTargetPath(paths.staging().toString()).setVolumeCapability(settings.capability())
                    .putAllSecrets(settings.secrets()).build());
        }
        var publish = NodePublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(paths.target().toString())
                .setVolumeCapability(settings.capability()).putAllSecrets(settings.secrets());
        if (node.stage()) publish.setStagingTargetPath(paths.staging().toString());
        session.node().nodePublishVolume(publish.build());
        Path target = paths.target();
        fill(Files.isDirectory(target) ? target.resolve("bench-fill.bin") : target, settings.fillBytes(), name);
        return id;
    }

    /** Writes {@code bytes} of data no two MiB alike (nothing for a filesystem to compress or share), then syncs. */
    private void fill(Path file, long bytes, String name) {
        long start = System.nanoTime();
        byte[] block = new byte[1 << 20];
        new SplittableRandom(name.hashCode()).nextBytes(block);
        var buffer = ByteBuffer.allocateDirect(block.length);
        try (var channel = FileChannel.open(file, StandardOpenOption.CREATE,
                StandardOpenOption.WRITE)) {
            for (long at = 0, n = 0; at < bytes; at += block.length, n++) {
                buffer.clear();
                buffer.put(block).putLong(0, n).flip();  // the block's number makes every block different
                buffer.limit((int) Math.min(block.length, bytes - at));
                while (buffer.hasRemaining()) channel.write(buffer, at + buffer.position());
            }
            channel.force(true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot fill " + file, e);
        }
        if (settings.progress()) {
            err.printf("filled %s with %d MiB in %.1f s%n", name, bytes >> 20, (System.nanoTime() - start) / 1e9);
            err.flush();
        }
    }

    /** A call without an answer may still have been carried out by the plugin. */
    static boolean mayHaveHappened(StatusRuntimeException e) {
        var code = e.getStatus().getCode();
        return code == Status.Code.DEADLINE_EXCEEDED || code == Status.Code.UNAVAILABLE || code == Status.Code.CANCELLED
                || code == Status.Code.UNKNOWN || code == Status.Code.INTERNAL;
    }

    private BenchReport report(String plugin, String started, double prefillSeconds, long iterations, long failed,
                               double elapsed, Recorder[] recorders) {
        var all = new Recorder();
        for (Recorder r : recorders) if (r != null) all.addAll(r);
        var rpcs = new LinkedHashSet<>(all.latencies.keySet());
        rpcs.addAll(all.errors.keySet());
        var calls = new LinkedHashMap<String, CallStats>();
        var samples = new LinkedHashMap<String, long[]>();
        for (String rpc : rpcs) {
            long[] sorted = all.latencies.containsKey(rpc) ? all.latencies.get(rpc).sorted() : new long[0];
            calls.put(rpc, CallStats.of(sorted, all.errors.getOrDefault(rpc, 0L)));
            long[] us = new long[sorted.length];
            for (int i = 0; i < sorted.length; i++) us[i] = Math.round(sorted[i] / 1e3);
            samples.put(rpc, us);
        }
        var codes = new TreeMap<String, Long>();
        all.codes.forEach((code, n) -> codes.put(code.name(), n));
        return new BenchReport(settings.scenario(), session.endpoint().uri(), plugin, started, settings.concurrency(),
                settings.requests(), settings.prefill(), round(prefillSeconds), iterations, failed, round(elapsed),
                calls, codes, samples);
    }

    private String pluginName() {
        var info = session.identity().getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
        return info.getName() + " " + info.getVendorVersion();
    }

    // ---- clean-up: snapshots, node and controller publications, volumes, our temporary directories ----

    private List<String> cleanUp() {
        var failures = new ArrayList<String>();
        var c = session;
        ledger.uncertainSnapshots.forEach((name, source) -> attempt(failures, "find snapshot " + name, () -> ledger.snapshots.add(
                c.controller().createSnapshot(CreateSnapshotRequest.newBuilder().setName(name).setSourceVolumeId(source)
                        .putAllSecrets(settings.secrets()).build()).getSnapshot().getSnapshotId())));
        ledger.uncertainVolumes.forEach((name, ignored) -> attempt(failures, "find volume " + name, () -> ledger.volumes.add(
                createVolume(new Recorder(), name))));
        int total = ledger.size();
        if (total > 0 && settings.progress()) {
            err.println("cleaning up " + ledger.snapshots.size() + " snapshots and " + ledger.volumes.size() + " volumes");
            err.flush();
        }
        ledger.uncertainGroupSnapshots.forEach((name, sources) -> attempt(failures, "find group snapshot " + name, () -> {
            var g = c.group().createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder().setName(name)
                    .addAllSourceVolumeIds(sources).putAllSecrets(settings.secrets()).build()).getGroupSnapshot();
            ledger.groupSnapshots.put(g.getGroupSnapshotId(), g.getSnapshotsList().stream().map(Snapshot::getSnapshotId).toList());
        }));
        parallel(ledger.groupSnapshots.keySet(), id -> attempt(failures, "delete group snapshot " + id,
                () -> c.group().deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(id)
                        .addAllSnapshotIds(ledger.groupSnapshots.get(id)).putAllSecrets(settings.secrets()).build())));
        parallel(ledger.snapshots, id -> attempt(failures, "delete snapshot " + id, () -> c.controller().deleteSnapshot(
                DeleteSnapshotRequest.newBuilder().setSnapshotId(id).putAllSecrets(settings.secrets()).build())));
        parallel(ledger.nodePaths.keySet(), id -> {
            var p = ledger.nodePaths.get(id);
            attempt(failures, "unpublish " + id, () -> c.node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder()
                    .setVolumeId(id).setTargetPath(p.target().toString()).build()));
            attempt(failures, "unstage " + id, () -> c.node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder()
                    .setVolumeId(id).setStagingTargetPath(p.staging().toString()).build()));
        });
        parallel(ledger.controllerPublished.keySet(), id -> attempt(failures, "controller unpublish " + id,
                () -> c.controller().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id)
                        .setNodeId(ledger.controllerPublished.get(id)).putAllSecrets(settings.secrets()).build())));
        parallel(ledger.volumes, id -> attempt(failures, "delete volume " + id, () -> c.controller().deleteVolume(
                DeleteVolumeRequest.newBuilder().setVolumeId(id).putAllSecrets(settings.secrets()).build())));
        for (Path dir : removeAfterwards) removeEmptyDirectories(dir, failures);
        return failures;
    }

    private void parallel(Collection<String> ids, Consumer<String> action) {
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            var limit = new Semaphore(Math.max(1, settings.concurrency()));
            for (String id : List.copyOf(ids)) {
                pool.submit(() -> {
                    limit.acquireUninterruptibly();
                    try {
                        action.accept(id);
                    } finally {
                        limit.release();
                    }
                });
            }
        }
    }

    private static void attempt(List<String> failures, String what, Runnable action) {
        try {
            action.run();
        } catch (RuntimeException e) {
            synchronized (failures) {
                failures.add(what + ": " + (e instanceof StatusRuntimeException s ? s.getStatus().getCode() + " "
                        + s.getStatus().getDescription() : e.toString()));
            }
        }
    }

    /** Removes our staging/target directories bottom-up; a directory that is not empty (still mounted?) is reported, never emptied. */
    private static void removeEmptyDirectories(Path root, List<String> failures) {
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) Files.delete(p);
            }
        } catch (IOException e) {
            failures.add("remove " + root + ": " + e);
        }
    }

    private static double round(double seconds) {
        return Math.round(seconds * 1000) / 1000.0;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
