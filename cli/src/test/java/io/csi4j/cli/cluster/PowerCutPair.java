package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.cli.reliability.PowerCut;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.cluster.AgentStatus;
import io.csi4j.proto.cluster.ClusterStatusGrpc;
import io.csi4j.proto.cluster.GetClusterStatusRequest;
import io.csi4j.proto.csi.ControllerGrpc;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * The cluster power-cut suites' machine (docs/power-cut.md, "In a cluster"): two image-engine agents and a controller
 * as real processes (mutual TLS on loopback), node-a on a pool image in a plain directory, node-b with its data
 * directory (and its pool) on a {@link PowerCut} disk. It draws the suite's choices from a printed seed, waits for an
 * instant in a copy node-b receives, cuts node-b's power and boots it on the clone (checking it starts unaided, with
 * no orphans), and at the end prints the cuts' lines and takes every process, mount and file down by pid and path.
 * One suite is one {@code name} ("cluster", "replication"): its directory, its {@code csi4j.powercut.<name>.cuts}
 * property and the prefix of its lines.
 */
final class PowerCutPair implements AutoCloseable {
    static final long MIB = 1L << 20;

    final String name;
    final int cuts;
    final long seed;
    final Random random;
    final Path dir;
    /** One line a cut, printed at the end, also when a check failed. */
    final List<String> report = new ArrayList<>();
    PowerCut disk;
    ProcessCluster cluster;
    private final long started = System.nanoTime();

    /** node-b after a cut: the answer the interrupted call got (null: none), the checks' context, its stderr and reconciler's line. */
    record Boot<T>(T answer, String context, String stderr, String reconciled) {}

    /** Boots the machine: node-b's agent gets {@code nodeBFlags} besides the image engine on its disk's pool. */
    PowerCutPair(String name, List<String> nodeBFlags) throws Exception {
        Privileged.requireRoot();
        this.name = name;
        this.cuts = Integer.getInteger("csi4j.powercut." + name + ".cuts", 3);
        this.seed = Long.getLong("csi4j.powercut.seed", System.nanoTime());
        System.out.println("power cut (" + name + "): seed " + seed + " (-Dcsi4j.powercut.seed=" + seed + " replays the choices), " + cuts + " cuts");
        this.random = new Random(seed);
        this.dir = Path.of(System.getProperty("csi4j.powercut.dir", "target/powercut")).toAbsolutePath().resolve(name);
        PowerCut.cleanUp(dir);   // what a killed earlier run left
        try {
            disk = PowerCut.create(dir.resolve("node-b-power"), 2L << 30);
            cluster = new ProcessCluster(dir);
            cluster.addAgent("node-a", "node-a", List.of("--engine", "image", "--pool-size", "1G", "--overcommit-ratio", "4")).start();
            // node-b's data directory is the power-cut disk's filesystem (dir/node-b-power/data), the pool in it
            var flags = new ArrayList<>(List.of("--engine", "image", "--pool-size", "0", "--overcommit-ratio", "4"));
            flags.addAll(nodeBFlags);
            cluster.addAgent(dir.relativize(disk.data).toString(), "node-b", flags).start();
            cluster.startController(List.of());
            cluster.awaitEveryNode();
        } catch (Exception | Error e) {
            close();
            throw e;
        }
    }

    ProcessCluster.AgentProcess nodeB() {
        return cluster.agent(cluster.dir.relativize(disk.data).toString());
    }

    ControllerGrpc.ControllerBlockingStub controller() {
        return ControllerGrpc.newBlockingStub(cluster.controllerChannel()).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    /**
     * Waits for the cut's instant in the incoming copy {@code copy} on node-b (as {@code cluster status} reports it):
     * {@code fraction} of its bytes received (below 1), or after the last one plus {@code commitDelayMillis} (1 and
     * above: the commit). Says when it was; "after the answer" when {@code attempt} was answered first.
     */
    String awaitInstant(String copy, double fraction, int commitDelayMillis, CompletableFuture<?> attempt, String received)
            throws Exception {
        var status = ClusterStatusGrpc.newBlockingStub(cluster.controllerChannel());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        long seenDone = -1, seenTotal = -1;
        while (System.nanoTime() < deadline) {
            if (attempt.isDone()) return "after the answer (copy seen at " + mib(seenDone) + " of " + mib(seenTotal) + ")";
            boolean running = false;
            for (AgentStatus a : status.withDeadlineAfter(10, TimeUnit.SECONDS).getClusterStatus(GetClusterStatusRequest.getDefaultInstance())
                    .getAgentsList()) {
                for (var c : a.getCopiesList()) {
                    if (!a.getNodeId().equals("node-b") || !c.getIncoming() || !c.getName().equals(copy) || c.getBytesTotal() == 0) continue;
                    running = true;
                    seenDone = c.getBytesDone();
                    seenTotal = c.getBytesTotal();
                    if (fraction < 1 && seenDone >= fraction * seenTotal) return "at " + mib(seenDone) + " of " + mib(seenTotal) + " " + received;
                }
            }
            if (fraction >= 1 && seenTotal > 0 && (!running || seenDone >= seenTotal)) {
                Thread.sleep(commitDelayMillis);
                return attempt.isDone() ? "after the answer" : "after the last byte (+" + commitDelayMillis + " ms, the commit)";
            }
            Thread.sleep(20);
        }
        throw new AssertionError("seed " + seed + ": no copy " + copy + " seen running on node-b");
    }

    /**
     * The cut while {@code attempt} ({@code call}, served by node-b) may be in flight: node-b frozen first (SIGSTOP), so
     * whatever it answered was sent before the clone; its disk cloned; it and its children killed by pid; the old
     * machine taken down; then the boot: node-b started on the clone by itself, and it reports no orphans.
     * {@code shown} names an answer in the context ("seed S, cut N <instant>, <call> answered OK (...)").
     */
    <T> Boot<T> cutAndBoot(int cut, String instant, String call, CompletableFuture<T> attempt, Function<T, String> shown) throws Exception {
        var target = nodeB();
        List<ProcessHandle> processes = new ArrayList<>(ProcessHandle.of(target.child.pid()).orElseThrow().descendants().toList());
        target.child.signal("STOP");
        Path copy = disk.cut();
        processes.addAll(ProcessHandle.of(target.child.pid()).map(p -> p.descendants().toList()).orElse(List.of()));
        target.child.kill();
        processes.forEach(ProcessHandle::destroyForcibly);
        T answer = null;
        String answered;
        try {
            answer = attempt.get(120, TimeUnit.SECONDS);
            answered = "answered OK (" + shown.apply(answer) + ")";
        } catch (ExecutionException e) {
            assertTrue(e.getCause() instanceof StatusRuntimeException, e.toString());
            answered = "unanswered (" + ((StatusRuntimeException) e.getCause()).getStatus().getCode() + ")";
        }
        disk.powerOff();
        disk.powerOn(copy);

        target.start();
        cluster.awaitEveryNode();
        String stderr = target.child.stderr();
        String context = "seed " + seed + ", cut " + cut + " " + instant + ", " + call + " " + answered;
        assertTrue(!stderr.contains("orphans:"), () -> context + ": node-b found orphans at start:\n" + stderr);
        String reconciled = stderr.lines().filter(l -> l.contains("reconciled:")).findFirst().orElse("nothing to reconcile")
                .replaceAll(".*reconciled: ", "");
        return new Boot<>(answer, context, stderr, reconciled);
    }

    /** The files in {@code dir} (none when there is no such directory). */
    static List<Path> list(Path dir) {
        if (!Files.isDirectory(dir)) return List.of();
        try (Stream<Path> files = Files.list(dir)) {
            return files.toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void nothingLeftIn(Path dir, String what) {
        List<Path> files = list(dir);
        assertTrue(files.isEmpty(), () -> what + ": leaked " + files);
    }

    static String mib(long bytes) {
        return bytes < 0 ? "?" : "%.1f MiB".formatted(bytes / (double) MIB);
    }

    /** The report, then every process by its pid (a frozen one is continued first), node-b's disk, node-a's pool, every file. */
    @Override
    public void close() throws Exception {
        report.forEach(System.out::println);
        System.out.printf("power cut (%s): seed %d, %d cuts reported, %.0f s%n", name, seed, report.size(), (System.nanoTime() - started) / 1e9);
        try {
            if (cluster != null) cluster.close();
        } finally {
            PowerCut.cleanUp(dir);
        }
    }
}
