// Not a test: the replicated-volume benchmark of issue 28, run by scripts/bench-replication against the processes it
// started (two image-engine agents node-1 and node-2 over mutual TLS, a controller). Every volume is ext4, staged
// through the primary's own node socket as the kubelet would; writes go through that mount with fio.
//   move CONTROLLER_SOCKET WORK PKI ROUNDS
//       a 10 GiB replicated volume (2 replicas) with a 1 GiB file; each round: a round (SyncReplica) so the secondary
//       holds a recent point, the file overwritten (1 GiB changed since that point, direct, fsynced), then the move:
//       NodeUnstage on the primary, ControllerUnpublish, ControllerPublish on the secondary (the handoff, its final
//       sync included), NodeStage there, each timed; the handoff's bytes from the new primary's log (its round
//       metrics are forgotten on promotion, as docs/replication.md says); the file's CRC32C checked on the new node.
//       The next round moves it back.
//   steady CONTROLLER_SOCKET WORK PKI SECONDS RATE BS INTERVAL FLOOR [WARM_SECONDS]
//       a 4 GiB replicated volume replicated every INTERVAL by the controller's own scheduler; fio randwrite at RATE
//       with BS blocks for SECONDS on a 1 GiB file laid out (and replicated) before; the secondary's metrics scraped
//       every second (lag, rounds and their bytes); the agents' CPU (both, user and sys apart) per GiB sent against
//       FLOOR (MobilityBench floor, CPU-s per GiB). With WARM_SECONDS > 0, a warm-up stretch of that workload first
//       and three rounds of the unchanged volume again, then the measured stretch on the same agents: the JIT's
//       warm-up apart from the per-GiB cost.
//   fio CONTROLLER_SOCKET WORK PKI ROUNDS SECONDS
//       a replicated (2 replicas) and an ordinary 2 GiB volume staged on the same node, a 1 GiB fio file in each;
//       ROUNDS rounds alternating which goes first; before each run on the replicated one a round cuts a fresh point
//       (so the run is "between syncs", after a cut: its first write to each block is a copy-on-write);
//       4k randwrite QD1 with fsync after each write, then 4k randread QD32 direct (libaio), SECONDS each.
//   between CONTROLLER_SOCKET WORK PKI ROUNDS SECONDS INTERVAL
//       what the target says literally: fio for SECONDS (several intervals) on a replicated volume whose controller
//       runs rounds every INTERVAL meanwhile, vs an ordinary volume on the same node, both 2 GiB ext4 with a laid-out
//       1 GiB file, each workload alternated (which goes first flips every round), ROUNDS rounds: 4k randwrite QD1
//       uniform with fsync after each write and O_DIRECT without fsync, the same with fsync over a zipf:1.2 hot set,
//       4k randread QD32 direct, 1 MiB sequential write QD1 direct; the rounds that completed during each run counted.
//   decompose CONTROLLER_SOCKET WORK PKI ROUNDS SECONDS INTERVAL_SECONDS [JOB_PREFIX]
//       the between-rounds cost split by layer: the write workloads of `between` on an ordinary volume and on a
//       replicated one with a point held and nothing running, with a snapshot cut every interval (no copy) and with
//       a round every interval (rounds asked by this bench, the volume's own interval 24h), alternated; fio's
//       write(+fsync) latency p99 and max, and how long each cut held writes (the primary's "cut of" log lines).
// CSI4J_BENCH_AGENT_PIDS="pid1 pid2", CSI4J_BENCH_AGENTS="node-1=host:port,node-2=host:port",
// CSI4J_BENCH_METRICS="node-1=host:port,node-2=host:port" come from the script.
// Usage: java -cp "cli/target/csi4j.jar:cli/target/lib/*" scripts/ReplicationBench.java MODE ...
import io.csi4j.proto.cluster.*;
import io.csi4j.proto.csi.*;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.MutualTls;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.*;
import java.util.*;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

public class ReplicationBench {
    static final long MIB = 1L << 20, GIB = 1L << 30;
    static final String NODE_KEY = "topology.csi4j.io/node";
    static Path work, pki;
    static ControllerGrpc.ControllerBlockingStub csiStub;
    static final Map<String, Endpoint.Tcp> AGENTS = new LinkedHashMap<>();
    static final Map<String, String> METRICS = new LinkedHashMap<>();

    public static void main(String[] a) throws Exception {
        csiStub = ControllerGrpc.newBlockingStub(Channels.connect(Endpoint.parse(a[1])));
        work = Path.of(a[2]);
        pki = Path.of(a[3]);
        for (String e : System.getenv("CSI4J_BENCH_AGENTS").split(",")) {
            String[] kv = e.split("=", 2), hp = kv[1].split(":");
            AGENTS.put(kv[0], new Endpoint.Tcp(hp[0], Integer.parseInt(hp[1])));
        }
        for (String e : System.getenv("CSI4J_BENCH_METRICS").split(",")) {
            String[] kv = e.split("=", 2);
            METRICS.put(kv[0], kv[1]);
        }
        switch (a[0]) {
            case "move" -> move(Integer.parseInt(a[4]));
            case "steady" -> steady(Integer.parseInt(a[4]), a[5], a[6], a[7], Double.parseDouble(a[8]), a.length > 9 ? Integer.parseInt(a[9]) : 0);
            case "fio" -> fioCompare(Integer.parseInt(a[4]), Integer.parseInt(a[5]));
            case "between" -> between(Integer.parseInt(a[4]), Integer.parseInt(a[5]), a[6]);
            case "decompose" -> decompose(Integer.parseInt(a[4]), Integer.parseInt(a[5]), Integer.parseInt(a[6]), a.length > 7 ? a[7] : "");
            default -> throw new IllegalArgumentException(a[0]);
        }
        System.exit(0);
    }

    // ---- 1. move time

    static void move(int rounds) throws Exception {
        String id = create("bench-move", 10 * GIB, Map.of("csi4j.io/replicas", "2", "csi4j.io/replication-interval", "24h"), null);
        String[] nodes = replicaNodes(id);
        String primary = nodes[0], secondary = nodes[1];
        System.out.printf("volume %s: 10 GiB ext4, primary %s, secondary %s (rounds started by the bench: interval 24h)%n", id, primary, secondary);
        publish(id, primary);
        Path mount = stage(id, primary);
        fio("layout", "--filename=" + mount.resolve("data"), "--rw=write", "--bs=1M", "--size=1g", "--direct=1", "--end_fsync=1");
        List<double[]> phases = new ArrayList<>();   // unstage, unpublish, publish (handoff), stage, total
        List<Long> handoffBytes = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            var base = sync(secondary, primary, id);
            System.out.printf("round %d: %s -> %s. Base round: %d bytes %s in %.1f s; metric csi4j_replica_last_round_bytes on %s: %s%n",
                    r + 1, primary, secondary, base.bytes, base.full ? "(full: no common point)" : "(delta against a point both hold)",
                    base.seconds, secondary, metric(secondary, "csi4j_replica_last_round_bytes", id).map(d -> String.format("%.0f", d)).orElse("absent"));
            var w = fio("change", "--filename=" + mount.resolve("data"), "--rw=write", "--bs=1M", "--size=1g", "--direct=1",
                    "--end_fsync=1", "--randseed=" + (r + 7));
            long crc = crc(mount.resolve("data"));
            double load0 = load();
            long t0 = System.nanoTime();
            node(primary).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(mount.toString()).build());
            long t1 = System.nanoTime();
            csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(primary).build());
            long t2 = System.nanoTime();
            publish(id, secondary);
            long t3 = System.nanoTime();
            mount = stage(id, secondary);
            long t4 = System.nanoTime();
            long bytes = handoffBytes(secondary, id);
            handoffBytes.add(bytes);
            double[] p = {(t1 - t0) / 1e9, (t2 - t1) / 1e9, (t3 - t2) / 1e9, (t4 - t3) / 1e9, (t4 - t0) / 1e9};
            phases.add(p);
            long crcAfter = crc(mount.resolve("data"));
            System.out.printf("  1 GiB changed (fio wrote %d bytes); move: unstage %.2f s, unpublish %.2f s, publish on %s (handoff, final sync) %.2f s, stage %.2f s = %.2f s;"
                            + " handoff sent %d bytes (%.3fx 1 GiB); file CRC32C %s on %s; load %.2f -> %.2f%n",
                    w.writeBytes, p[0], p[1], secondary, p[2], p[3], p[4], bytes, bytes / (double) GIB,
                    crc == crcAfter ? "identical" : "DIFFERS", secondary, load0, load());
            if (crc != crcAfter) throw new IllegalStateException("the file differs after the move");
            String t = primary; primary = secondary; secondary = t;
        }
        String[] names = {"unstage", "unpublish", "publish (handoff)", "stage", "total"};
        StringBuilder s = new StringBuilder("move medians over " + rounds + " rounds (min-max):");
        for (int i = 0; i < names.length; i++) {
            int k = i;
            s.append(String.format(" %s %s s;", names[i], med(phases.stream().mapToDouble(p -> p[k]).toArray(), "%.2f")));
        }
        System.out.println(s);
        System.out.printf("handoff bytes, median (min-max): %s GiB for 1 GiB changed%n",
                med(handoffBytes.stream().mapToDouble(b -> b / (double) GIB).toArray(), "%.3f"));
        cleanup(id, primary, mount);
    }

    // ---- 2. steady replication

    record Round(double syncAt, double bytes, double seconds) {}

    static void steady(int seconds, String rate, String bs, String interval, double floor, int warmSeconds) throws Exception {
        // what the agents spend with nothing to replicate (heartbeats, the scheduler's ListReplicas each second, scrapes)
        Cpu idle0 = agentsCpu();
        long i0 = System.nanoTime();
        Thread.sleep(15_000);
        double idlePerSecond = agentsCpu().minus(idle0).total() / ((System.nanoTime() - i0) / 1e9);
        String id = create("bench-steady", 4 * GIB, Map.of("csi4j.io/replicas", "2", "csi4j.io/replication-interval", interval), null);
        String[] nodes = replicaNodes(id);
        String primary = nodes[0], secondary = nodes[1];
        System.out.printf("volume %s: 4 GiB ext4, primary %s, secondary %s, interval %s (the controller's scheduler)%n", id, primary, secondary, interval);
        publish(id, primary);
        Path mount = stage(id, primary);
        fio("layout", "--filename=" + mount.resolve("data"), "--rw=write", "--bs=1M", "--size=1g", "--direct=1", "--end_fsync=1");
        // two rounds completed after the layout: the second was cut after it, so what follows is the workload's alone
        var scraper = new Scraper(secondary, id);
        Thread.ofPlatform().daemon().start(scraper);
        scraper.awaitRounds(2, 180);
        double perQuietRound = quietRounds(scraper, "");
        if (warmSeconds > 0) {
            // the same agents, first a warm-up stretch (the JIT compiles the round's code), then the measured one: what
            // the warm-up costs apart from what a GiB costs an agent that has run for a while
            System.out.printf("-- warm-up stretch (%d s): the agents' first workload%n", warmSeconds);
            stretch(scraper, mount, warmSeconds, rate, bs, interval, floor, perQuietRound, idlePerSecond, primary, secondary);
            perQuietRound = quietRounds(scraper, " after the warm-up");
            System.out.printf("-- measured stretch (%d s), the same agents after the warm-up%n", seconds);
        }
        stretch(scraper, mount, seconds, rate, bs, interval, floor, perQuietRound, idlePerSecond, primary, secondary);
        scraper.stop = true;
        cleanup(id, primary, mount);
        // the idle cost again, now that the agents are warm: the first one also pays the JIT of the idle calls
        Cpu end0 = agentsCpu();
        long e0 = System.nanoTime();
        Thread.sleep(15_000);
        Cpu end = agentsCpu().minus(end0);
        double took = (System.nanoTime() - e0) / 1e9;
        System.out.printf("the agents idle again at the end (volume deleted, warm): %.3f CPU-s per second (user %.3f, sys %.3f; before the volume %.3f)%n",
                end.total() / took, end.userTotal() / took, end.sysTotal() / took, idlePerSecond);
    }

    /** Three rounds of an unchanged volume: what a round costs the agents whatever it carries; returns CPU-s a round. */
    static double quietRounds(Scraper scraper, String when) throws Exception {
        // cut, freeze, delta of the extent maps, reflinks, fsyncs, renames, state: beside what each byte costs
        Cpu q0 = agentsCpu();
        var from = java.time.Instant.now();
        int before = scraper.rounds.size();
        // CSI4J_BENCH_STRACE=1: the agents' syscalls of these rounds counted (strace -c -f), the warm ones only
        List<Process> traces = new ArrayList<>();
        if (!when.isEmpty() && "1".equals(System.getenv("CSI4J_BENCH_STRACE"))) {
            for (String pid : System.getenv("CSI4J_BENCH_AGENT_PIDS").trim().split(" +")) {
                traces.add(new ProcessBuilder("strace", "-c", "-f", "-p", pid, "-o", work.resolve("strace-" + pid + ".txt").toString())
                        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start());
            }
            Thread.sleep(2000);
        }
        scraper.awaitRounds(3, 180);
        Cpu q = agentsCpu().minus(q0);
        for (Process t : traces) {
            t.destroy();   // SIGTERM: strace detaches and writes its summary
            t.waitFor(30, TimeUnit.SECONDS);
        }
        for (String pid : traces.isEmpty() ? new String[0] : System.getenv("CSI4J_BENCH_AGENT_PIDS").trim().split(" +")) {
            System.out.println("strace -c -f of agent pid " + pid + " over these rounds (strace itself slows them: counts, not CPU):");
            Files.readAllLines(work.resolve("strace-" + pid + ".txt")).stream().limit(25).forEach(l -> System.out.println("  " + l));
        }
        List<Round> quiet;
        synchronized (scraper.rounds) { quiet = new ArrayList<>(scraper.rounds.subList(before, scraper.rounds.size())); }
        int n = quiet.size();
        System.out.printf("rounds of the unchanged volume%s: %s bytes; the agents' CPU per round %.3f s (user %.3f, sys %.3f; idle included)"
                        + " [%s to %s]%n", when, quiet.stream().map(r -> String.format("%.0f", r.bytes)).toList(), q.total() / n, q.userTotal() / n,
                q.sysTotal() / n, from.truncatedTo(java.time.temporal.ChronoUnit.SECONDS), java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
        return q.total() / n;
    }

    /** fio randwrite for {@code seconds}, until a round cut after its end: lag, bytes, and the agents' CPU per GiB sent. */
    static void stretch(Scraper scraper, Path mount, int seconds, String rate, String bs, String interval, double floor,
                        double perQuietRound, double idlePerSecond, String primary, String secondary) throws Exception {
        double startSync = scraper.lastSync();
        Cpu cpu0 = agentsCpu();
        long t0 = System.nanoTime();
        double load0 = load();
        scraper.recordLag(true);
        var w = fio("steady", "--filename=" + mount.resolve("data"), "--rw=randwrite", "--bs=" + bs, "--size=1g", "--direct=1",
                "--ioengine=psync", "--rate=" + rate, "--time_based", "--runtime=" + seconds, "--randrepeat=0");
        double fioEnd = System.currentTimeMillis() / 1e3;
        // the rounds that complete once the workload stopped carry its last writes: wait for one cut after its end
        scraper.awaitSyncAfter(fioEnd, 120);
        scraper.recordLag(false);
        Cpu d = agentsCpu().minus(cpu0);
        double wall = (System.nanoTime() - t0) / 1e9;
        List<Round> rounds = scraper.roundsAfter(startSync);
        double sent = rounds.stream().mapToDouble(Round::bytes).sum();
        double cpu = d.total(), gib = sent / GIB;
        System.out.printf("fio randwrite %s, bs %s, %d s on a 1 GiB file (random map: no block written twice in a run under 1 GiB,"
                + " so written = changed): wrote %d bytes (%.1f MiB), %.0f IOPS%n", rate, bs, seconds, w.writeBytes, w.writeBytes / (double) MIB, w.writeIops);
        System.out.printf("rounds completed from fio's start to the first cut after its end: %d; bytes sent %.0f (%.1f MiB) = %.3fx the bytes written%n",
                rounds.size(), sent, sent / MIB, sent / w.writeBytes);
        List<String> each = new ArrayList<>();
        for (Round r : rounds) each.add(String.format("%.1f MiB/%.1f s", r.bytes / MIB, r.seconds));
        System.out.println("each round (bytes/duration): " + String.join(", ", each));
        double[] lags = scraper.lags();
        scraper.lags.clear();
        System.out.printf("lag scraped every second while fio ran and until that round (%d samples): median %.1f s, p90 %.1f s, max %.1f s (interval %s)%n",
                lags.length, pct(lags, 0.5), pct(lags, 0.9), pct(lags, 1.0), interval);
        int p = index(primary), s = index(secondary);
        System.out.printf("agents' CPU (user+sys) over %.0f s: %s %.2f s (user %.2f, sys %.2f) + %s %.2f s (user %.2f, sys %.2f) = %.2f s;"
                        + " per GiB sent: %.2f CPU-s (user %.2f, sys %.2f) = %.2fx the copy floor (%.2f)%n",
                wall, primary, d.user[p] + d.sys[p], d.user[p], d.sys[p], secondary, d.user[s] + d.sys[s], d.user[s], d.sys[s], cpu,
                cpu / gib, d.userTotal() / gib, d.sysTotal() / gib, cpu / gib / floor, floor);
        double net = cpu - idlePerSecond * wall;
        System.out.printf("the agents idle (no volume) cost %.3f CPU-s per second; without it: %.2f CPU-s per GiB sent = %.2fx the floor%n",
                idlePerSecond, net / gib, net / gib / floor);
        double perByte = cpu - perQuietRound * rounds.size();
        System.out.printf("split: %d rounds x %.3f CPU-s a round costs unchanged = %.2f s; the rest, %.2f s, is %.2f CPU-s per GiB sent = %.2fx the floor%n",
                rounds.size(), perQuietRound, perQuietRound * rounds.size(), perByte, perByte / gib, perByte / gib / floor);
        System.out.printf("load %.2f -> %.2f%n", load0, load());
    }

    static int index(String node) {
        return new ArrayList<>(AGENTS.keySet()).indexOf(node);
    }

    /** The secondary's round metrics, every second: each completed round once (by its sync time), and the lag. */
    static final class Scraper implements Runnable {
        final String node, id;
        final List<Round> rounds = Collections.synchronizedList(new ArrayList<>());
        final List<Double> lags = Collections.synchronizedList(new ArrayList<>());
        volatile boolean stop, recording;
        volatile double last = -1;

        Scraper(String node, String id) { this.node = node; this.id = id; }

        public void run() {
            while (!stop) {
                try {
                    Map<String, Double> m = metrics(node, id);
                    Double sync = m.get("csi4j_replica_last_sync_timestamp_seconds");
                    if (sync != null && sync != last) {
                        rounds.add(new Round(sync, m.get("csi4j_replica_last_round_bytes"), m.get("csi4j_replica_last_round_seconds")));
                        last = sync;
                    }
                    if (recording && m.containsKey("csi4j_replica_lag_seconds")) lags.add(m.get("csi4j_replica_lag_seconds"));
                    Thread.sleep(1000);
                } catch (Exception e) {
                    System.out.println("scrape failed: " + e);
                }
            }
        }

        void recordLag(boolean on) { recording = on; }

        double lastSync() { return last; }

        void awaitRounds(int n, int timeoutSeconds) throws Exception {
            int seen = rounds.size();
            for (int i = 0; i < timeoutSeconds * 10 && rounds.size() < seen + n; i++) Thread.sleep(100);
            if (rounds.size() < seen + n) throw new IllegalStateException("no " + n + " rounds in " + timeoutSeconds + " s");
        }

        /** Until a round whose cut (sync time minus its duration) came after {@code at}. */
        void awaitSyncAfter(double at, int timeoutSeconds) throws Exception {
            for (int i = 0; i < timeoutSeconds * 10; i++) {
                synchronized (rounds) {
                    if (!rounds.isEmpty() && rounds.getLast().syncAt - rounds.getLast().seconds > at) return;
                }
                Thread.sleep(100);
            }
            throw new IllegalStateException("no round cut after the workload in " + timeoutSeconds + " s");
        }

        List<Round> roundsAfter(double sync) {
            synchronized (rounds) { return rounds.stream().filter(r -> r.syncAt > sync).toList(); }
        }

        double[] lags() {
            synchronized (lags) { return lags.stream().mapToDouble(Double::doubleValue).toArray(); }
        }
    }

    // ---- 3. fio on a replicated volume vs an ordinary one

    static void fioCompare(int rounds, int seconds) throws Exception {
        String rep = create("bench-fio-replicated", 2 * GIB, Map.of("csi4j.io/replicas", "2", "csi4j.io/replication-interval", "24h"), null);
        String[] nodes = replicaNodes(rep);
        String primary = nodes[0], secondary = nodes[1];
        String plain = create("bench-fio-plain", 2 * GIB, Map.of(), primary);
        String snapped = create("bench-fio-snapshotted", 2 * GIB, Map.of(), primary);
        System.out.printf("replicated %s (primary %s, secondary %s), ordinary %s, and ordinary %s snapshotted before each run"
                + " (the same reflink copy-on-write as a cut point, without replication), each 2 GiB ext4 staged on %s%n", rep, primary, secondary, plain, snapped, primary);
        Map<String, Path> mounts = new LinkedHashMap<>();
        for (String v : List.of(plain, rep, snapped)) {
            publish(v, primary);
            mounts.put(v, stage(v, primary));
            fio("layout", "--filename=" + mounts.get(v).resolve("data"), "--rw=write", "--bs=1M", "--size=1g", "--direct=1", "--end_fsync=1");
        }
        Map<String, List<Double>> write = new HashMap<>(), read = new HashMap<>();
        List<Double> writeRatio = new ArrayList<>(), readRatio = new ArrayList<>(), snapRatio = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            List<String> order = r % 2 == 0 ? List.of(plain, rep, snapped) : List.of(snapped, rep, plain);
            Map<String, double[]> got = new HashMap<>();
            for (String v : order) {
                String cut = "";
                if (v.equals(rep)) {
                    var s = sync(secondary, primary, rep);
                    cut = String.format(" (after a round: %d bytes in %.1f s)", s.bytes, s.seconds);
                }
                String snapshot = null;
                if (v.equals(snapped)) snapshot = csi().createSnapshot(CreateSnapshotRequest.newBuilder().setName("bench-fio-" + r)
                        .setSourceVolumeId(snapped).build()).getSnapshot().getSnapshotId();
                double l0 = load();
                var w = fio("randwrite", "--filename=" + mounts.get(v).resolve("data"), "--rw=randwrite", "--bs=4k", "--size=1g",
                        "--ioengine=psync", "--fsync=1", "--time_based", "--runtime=" + seconds, "--randrepeat=0");
                var rd = fio("randread", "--filename=" + mounts.get(v).resolve("data"), "--rw=randread", "--bs=4k", "--size=1g",
                        "--ioengine=libaio", "--iodepth=32", "--direct=1", "--time_based", "--runtime=" + seconds, "--randrepeat=0");
                if (snapshot != null) csi().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(snapshot).build());
                got.put(v, new double[] {w.writeIops, rd.readIops});
                write.computeIfAbsent(v, k -> new ArrayList<>()).add(w.writeIops);
                read.computeIfAbsent(v, k -> new ArrayList<>()).add(rd.readIops);
                System.out.printf("round %d %s%s: 4k randwrite QD1 fsync %.0f IOPS, 4k randread QD32 direct %.0f IOPS; load %.2f -> %.2f%n",
                        r + 1, v.equals(rep) ? "replicated " : v.equals(plain) ? "ordinary   " : "snapshotted", cut, w.writeIops, rd.readIops, l0, load());
            }
            writeRatio.add(got.get(rep)[0] / got.get(plain)[0]);
            readRatio.add(got.get(rep)[1] / got.get(plain)[1]);
            snapRatio.add(got.get(snapped)[0] / got.get(plain)[0]);
        }
        double[] wr = writeRatio.stream().mapToDouble(d -> d).toArray(), rr = readRatio.stream().mapToDouble(d -> d).toArray();
        System.out.printf("randwrite QD1 fsync: ordinary %s IOPS, replicated %s IOPS; replicated/ordinary per round %s: median %s%n",
                med(write.get(plain)), med(write.get(rep)), fmt(wr), med(wr, "%.3f"));
        System.out.printf("randread QD32 direct: ordinary %s IOPS, replicated %s IOPS; replicated/ordinary per round %s: median %s%n",
                med(read.get(plain)), med(read.get(rep)), fmt(rr), med(rr, "%.3f"));
        System.out.printf("randwrite QD1 fsync on the ordinary volume snapshotted just before: %s IOPS; snapshotted/ordinary per round %s: median %s%n",
                med(write.get(snapped)), fmt(snapRatio.stream().mapToDouble(d -> d).toArray()), med(snapRatio.stream().mapToDouble(d -> d).toArray(), "%.3f"));
        System.out.printf("randread QD32 direct on it: %s IOPS%n", med(read.get(snapped)));
        cleanup(plain, primary, mounts.get(plain));
        cleanup(snapped, primary, mounts.get(snapped));
        cleanup(rep, primary, mounts.get(rep));
    }

    // ---- 4. fio over a steady stretch between rounds, replication running

    static void between(int rounds, int seconds, String interval) throws Exception {
        String rep = create("bench-between-replicated", 2 * GIB, Map.of("csi4j.io/replicas", "2", "csi4j.io/replication-interval", interval), null);
        String[] nodes = replicaNodes(rep);
        String primary = nodes[0], secondary = nodes[1];
        String plain = create("bench-between-plain", 2 * GIB, Map.of(), primary);
        Map<String, Path> mounts = new LinkedHashMap<>();
        for (String v : List.of(plain, rep)) {
            publish(v, primary);
            mounts.put(v, stage(v, primary));
            fio("layout", "--filename=" + mounts.get(v).resolve("data"), "--rw=write", "--bs=1M", "--size=1g", "--direct=1", "--end_fsync=1");
        }
        var scraper = new Scraper(secondary, rep);
        Thread.ofPlatform().daemon().start(scraper);
        scraper.awaitRounds(2, 180);   // the layout replicated: what follows is the workloads' alone
        System.out.printf("replicated %s (primary %s, secondary %s, interval %s by the controller's scheduler) and ordinary %s,"
                + " 2 GiB ext4 each on %s, a 1 GiB file in each; fio %d s per run%n", rep, primary, secondary, interval, plain, primary, seconds);
        String[] common = {"--size=1g", "--time_based", "--runtime=" + seconds, "--randrepeat=0"};
        Map<String, String[]> jobs = new LinkedHashMap<>();
        jobs.put("4k randwrite QD1 fsync, uniform", new String[] {"--rw=randwrite", "--bs=4k", "--ioengine=psync", "--fsync=1"});
        jobs.put("4k randwrite QD1 direct, no fsync, uniform", new String[] {"--rw=randwrite", "--bs=4k", "--ioengine=psync", "--direct=1"});
        jobs.put("4k randwrite QD1 fsync, zipf:1.2", new String[] {"--rw=randwrite", "--bs=4k", "--ioengine=psync", "--fsync=1", "--random_distribution=zipf:1.2"});
        jobs.put("4k randread QD32 direct", new String[] {"--rw=randread", "--bs=4k", "--ioengine=libaio", "--iodepth=32", "--direct=1"});
        jobs.put("1M write (sequential) QD1 direct", new String[] {"--rw=write", "--bs=1M", "--ioengine=psync", "--direct=1"});
        Map<String, Map<String, List<Double>>> got = alternate(rounds, jobs, common, List.of(plain, rep), mounts::get, (r, job, v, args) -> {
            double l0 = load(), t0 = System.currentTimeMillis() / 1e3;
            var f = fio("between", args);
            double iops = job.contains("read") ? f.readIops : f.writeIops;
            String during = "";
            if (v.equals(rep)) {
                List<Round> in;
                synchronized (scraper.rounds) { in = scraper.rounds.stream().filter(x -> x.syncAt > t0).toList(); }
                during = String.format(", %d rounds completed during it (%s MiB)", in.size(),
                        in.stream().map(x -> String.format("%.1f", x.bytes / MIB)).toList());
            }
            System.out.printf("round %d %-44s %s %.0f IOPS%s; load %.2f -> %.2f%n", r + 1, job,
                    v.equals(rep) ? "replicated" : "ordinary  ", iops, during, l0, load());
            return iops;
        });
        System.out.println("replicated/ordinary, per round and median (min-max):");
        for (String k : jobs.keySet()) {
            double[] q = ratios(got.get(k).get(rep), got.get(k).get(plain));
            System.out.printf("  %-44s ordinary %s IOPS, replicated %s IOPS; ratios %s: median %s%n", k, med(got.get(k).get(plain)), med(got.get(k).get(rep)), fmt(q), med(q, "%.3f"));
        }
        scraper.stop = true;
        cleanup(plain, primary, mounts.get(plain));
        cleanup(rep, primary, mounts.get(rep));
    }

    // ---- 5. the between-rounds cost split by layer

    /**
     * The same workloads on an ordinary volume and on a replicated one under three regimes, alternated: {@code held}
     * (a round just before, then nothing: the copy-on-write of blocks shared with one held point), {@code cuts} (a
     * user snapshot of the volume every interval, the previous one deleted: the freeze and the re-cut's copy-on-write,
     * no copy), {@code rounds} (a round every interval: all of it, the secondary's copy on this disk included). The
     * primary's log says how long each cut held the workload's writes (ImageFreezer's "cut of" lines).
     */
    static void decompose(int rounds, int seconds, int intervalSeconds, String only) throws Exception {
        String rep = create("bench-decompose-replicated", 2 * GIB, Map.of("csi4j.io/replicas", "2", "csi4j.io/replication-interval", "24h"), null);
        String[] nodes = replicaNodes(rep);
        String primary = nodes[0], secondary = nodes[1];
        String plain = create("bench-decompose-plain", 2 * GIB, Map.of(), primary);
        Map<String, Path> mounts = new LinkedHashMap<>();
        for (String v : List.of(plain, rep)) {
            publish(v, primary);
            mounts.put(v, stage(v, primary));
            fio("layout", "--filename=" + mounts.get(v).resolve("data"), "--rw=write", "--bs=1M", "--size=1g", "--direct=1", "--end_fsync=1");
        }
        var first = sync(secondary, primary, rep);
        System.out.printf("replicated %s (primary %s, secondary %s; rounds only when this bench asks) and ordinary %s, 2 GiB ext4 each on %s,"
                + " a 1 GiB file in each (first round %d bytes in %.1f s); fio %d s per run, interval %d s%n",
                rep, primary, secondary, plain, primary, first.bytes, first.seconds, seconds, intervalSeconds);
        String[] common = {"--size=1g", "--time_based", "--runtime=" + seconds, "--randrepeat=0"};
        Map<String, String[]> jobs = new LinkedHashMap<>();
        jobs.put("4k randwrite QD1 fsync, uniform", new String[] {"--rw=randwrite", "--bs=4k", "--ioengine=psync", "--fsync=1"});
        jobs.put("4k randwrite QD1 direct, no fsync", new String[] {"--rw=randwrite", "--bs=4k", "--ioengine=psync", "--direct=1"});
        jobs.put("4k randwrite QD1 fsync, zipf:1.2", new String[] {"--rw=randwrite", "--bs=4k", "--ioengine=psync", "--fsync=1", "--random_distribution=zipf:1.2"});
        jobs.put("1M write (sequential) QD1 direct", new String[] {"--rw=write", "--bs=1M", "--ioengine=psync", "--direct=1"});
        if (!only.isEmpty()) jobs.keySet().removeIf(k -> !k.startsWith(only));
        List<String> regimes = List.of("ordinary", "held", "cuts", "rounds");
        Map<String, List<Double>> p99 = new HashMap<>(), max = new HashMap<>(), held = new HashMap<>(), flush = new HashMap<>(), clone = new HashMap<>();
        Path log = work.resolve(primary + ".err");
        Map<String, Map<String, List<Double>>> iops = alternate(rounds, jobs, common, regimes,
                regime -> mounts.get(regime.equals("ordinary") ? plain : rep), (r, job, regime, args) -> {
            String v = regime.equals("ordinary") ? plain : rep;
            String before = "";
            if (!regime.equals("ordinary")) {
                var s = sync(secondary, primary, rep);   // a point cut just before: every block shared with it
                before = String.format(" (round before: %.1f MiB in %.1f s)", s.bytes / (double) MIB, s.seconds);
            }
            var stop = new java.util.concurrent.atomic.AtomicBoolean();
            var done = new java.util.concurrent.atomic.AtomicInteger();
            Thread beside = switch (regime) {
                case "cuts" -> Thread.ofPlatform().start(() -> {
                    String last = null;
                    for (int n = 0; sleepUntil(stop, intervalSeconds); n++) {
                        String id = csi().createSnapshot(CreateSnapshotRequest.newBuilder().setName("bench-decompose-" + System.nanoTime())
                                .setSourceVolumeId(rep).build()).getSnapshot().getSnapshotId();
                        if (last != null) csi().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(last).build());
                        last = id;
                        done.incrementAndGet();
                    }
                    if (last != null) csi().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(last).build());
                });
                case "rounds" -> Thread.ofPlatform().start(() -> {
                    while (sleepUntil(stop, intervalSeconds)) {
                        sync(secondary, primary, rep);
                        done.incrementAndGet();
                    }
                });
                default -> null;
            };
            long logFrom = Files.size(log);
            double l0 = load();
            var f = fio("decompose", args);
            stop.set(true);
            if (beside != null) beside.join();
            List<double[]> cuts = cutLines(log, logFrom, v);
            String k = job + "|" + regime;
            p99.computeIfAbsent(k, x -> new ArrayList<>()).add(f.p99Ms);
            max.computeIfAbsent(k, x -> new ArrayList<>()).add(f.maxMs);
            for (double[] c : cuts) {
                held.computeIfAbsent(k, x -> new ArrayList<>()).add(c[0]);
                flush.computeIfAbsent(k, x -> new ArrayList<>()).add(c[1]);
                clone.computeIfAbsent(k, x -> new ArrayList<>()).add(c[2]);
            }
            System.out.printf("round %d %-34s %-8s %6.0f IOPS, write+fsync p99 %.1f ms, max %.1f ms; %d %s during it, writes held per cut %s ms%s; load %.2f -> %.2f%n",
                    r + 1, job, regime, f.writeIops, f.p99Ms, f.maxMs, done.get(), regime.equals("cuts") ? "snapshots" : "rounds",
                    cuts.stream().map(c -> String.format("%.0f", c[0])).toList(), before, l0, load());
            return f.writeIops;
        });
        System.out.println("per workload and regime: median (min-max) over the rounds; ratio to the ordinary volume of the same round;"
                + " writes held per cut (all cuts of those runs: median (min-max); FIFREEZE with its flush / the clone)");
        for (String job : jobs.keySet()) {
            for (String regime : regimes) {
                String k = job + "|" + regime;
                double[] q = ratios(iops.get(job).get(regime), iops.get(job).get("ordinary"));
                System.out.printf("  %-34s %-8s %s IOPS, ratio %s, p99 %s ms, max %s ms%s%n", job, regime, med(iops.get(job).get(regime)), med(q, "%.3f"),
                        med(p99.get(k)), med(max.get(k)), held.containsKey(k) ? String.format("; held %s ms per cut (freeze+flush %s, clone %s)",
                                med(held.get(k)), med(flush.get(k)), med(clone.get(k))) : "");
            }
        }
        cleanup(plain, primary, mounts.get(plain));
        cleanup(rep, primary, mounts.get(rep));
    }

    /** One fio run of a workload on one arm of {@link #alternate}; returns the IOPS it measured. */
    interface Run {
        double run(int round, String job, String arm, String[] fioArgs) throws Exception;
    }

    /**
     * The alternated loop of {@code between} and {@code decompose}: {@code rounds} rounds, each workload of {@code jobs}
     * on every arm (a volume, or a regime of one) with its file, the arms' order reversed every other round and
     * workload so neither goes first always; returns per workload and arm the IOPS of each round (the same index is
     * the same round).
     */
    static Map<String, Map<String, List<Double>>> alternate(int rounds, Map<String, String[]> jobs, String[] common, List<String> arms,
            java.util.function.Function<String, Path> file, Run run) throws Exception {
        Map<String, Map<String, List<Double>>> got = new LinkedHashMap<>();
        for (int r = 0; r < rounds; r++) {
            int j = 0;
            for (var job : jobs.entrySet()) {
                List<String> order = new ArrayList<>(arms);
                if ((r + j++) % 2 == 1) Collections.reverse(order);
                for (String arm : order) {
                    List<String> args = new ArrayList<>(List.of("--filename=" + file.apply(arm).resolve("data")));
                    args.addAll(List.of(job.getValue()));
                    args.addAll(List.of(common));
                    double iops = run.run(r, job.getKey(), arm, args.toArray(String[]::new));
                    got.computeIfAbsent(job.getKey(), k -> new LinkedHashMap<>()).computeIfAbsent(arm, k -> new ArrayList<>()).add(iops);
                }
            }
        }
        return got;
    }

    /** Each round's {@code of / to}. */
    static double[] ratios(List<Double> of, List<Double> to) {
        double[] q = new double[of.size()];
        for (int i = 0; i < q.length; i++) q[i] = of.get(i) / to.get(i);
        return q;
    }

    /** Sleeps one interval unless stopped meanwhile; true when the interval passed. */
    static boolean sleepUntil(java.util.concurrent.atomic.AtomicBoolean stop, int seconds) {
        for (int i = 0; i < seconds * 10; i++) {
            if (stop.get()) return false;
            try { Thread.sleep(100); } catch (InterruptedException e) { return false; }
        }
        return !stop.get();
    }

    static final Pattern CUT = Pattern.compile("cut of \\[([^\\]]*)\\]: writes held ([0-9.]+) ms \\(freeze and flush ([0-9.]+) ms, clone ([0-9.]+) ms");

    /** The primary's "cut of" lines of this volume logged since byte {@code from}: {held, freeze+flush, clone} ms each. */
    static List<double[]> cutLines(Path log, long from, String volume) throws IOException {
        List<double[]> cuts = new ArrayList<>();
        try (var ch = FileChannel.open(log)) {
            ByteBuffer b = ByteBuffer.allocate((int) Math.max(0, ch.size() - from));
            ch.read(b, from);
            var m = CUT.matcher(new String(b.array(), 0, b.position()));
            while (m.find()) {
                if (m.group(1).contains(volume)) cuts.add(new double[] {Double.parseDouble(m.group(2)), Double.parseDouble(m.group(3)), Double.parseDouble(m.group(4))});
            }
        }
        return cuts;
    }

    // ---- helpers

    static ControllerGrpc.ControllerBlockingStub csi() {
        return csiStub.withDeadlineAfter(600, TimeUnit.SECONDS);
    }

    static final Map<String, NodeGrpc.NodeBlockingStub> NODES = new HashMap<>();

    static NodeGrpc.NodeBlockingStub node(String n) {
        return NODES.computeIfAbsent(n, k -> NodeGrpc.newBlockingStub(Channels.connect(Endpoint.parse("unix://" + work.resolve(k).resolve("csi.sock")))))
                .withDeadlineAfter(600, TimeUnit.SECONDS);
    }

    static final Map<String, NodeAgentGrpc.NodeAgentBlockingStub> AGENT_STUBS = new HashMap<>();

    static NodeAgentGrpc.NodeAgentBlockingStub agent(String n) {
        return AGENT_STUBS.computeIfAbsent(n, k -> NodeAgentGrpc.newBlockingStub(Channels.builder(AGENTS.get(k),
                new MutualTls(pki.resolve("controller.pem"), pki.resolve("controller-key.pem"), pki.resolve("ca.pem")), "127.0.0.1").build()))
                .withDeadlineAfter(600, TimeUnit.SECONDS);
    }

    static VolumeCapability ext4() {
        return VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.newBuilder().setFsType("ext4"))
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
    }

    static String create(String name, long bytes, Map<String, String> params, String onNode) {
        var b = CreateVolumeRequest.newBuilder().setName(name).addVolumeCapabilities(ext4())
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(bytes)).putAllParameters(params);
        if (onNode != null) b.setAccessibilityRequirements(TopologyRequirement.newBuilder()
                .addRequisite(Topology.newBuilder().putSegments(NODE_KEY, onNode)));
        return csi().createVolume(b.build()).getVolume().getVolumeId();
    }

    /** The replica nodes a replicated id names, the primary's first (docs/replication.md, "Ids"; plain node tags here). */
    static String[] replicaNodes(String id) {
        String tags = id.substring(id.indexOf('-', 4) + 1);
        return tags.split("__");
    }

    static void publish(String id, String n) {
        csi().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(n).setVolumeCapability(ext4()).build());
    }

    static Path stage(String id, String n) throws IOException {
        Path staging = Files.createDirectories(work.resolve("stage-" + n).resolve(id));
        node(n).nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setVolumeCapability(ext4()).build());
        return staging;
    }

    static void cleanup(String id, String n, Path mount) {
        node(n).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(mount.toString()).build());
        csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(n).build());
        csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
    }

    record Synced(long bytes, boolean full, double seconds) {}

    /** One round now: the secondary's agent pulls from the primary's (NodeAgent.SyncReplica), as the scheduler does. */
    static Synced sync(String secondary, String primary, String id) {
        var from = PeerAgent.newBuilder().setNodeId(primary).setAddress(AGENTS.get(primary).host() + ":"
                + AGENTS.get(primary).port()).setAuthority("127.0.0.1").build();
        long t0 = System.nanoTime();
        var r = agent(secondary).syncReplica(SyncReplicaRequest.newBuilder().setVolumeId(id).setPrimary(from).build());
        return new Synced(r.getBytesReceived(), r.getBasePoint().isEmpty(), (System.nanoTime() - t0) / 1e9);
    }

    static final Pattern HOLDS = Pattern.compile("replica of (\\S+) now holds point \\S+ from node '[^']*': (\\d+) bytes");

    /** The bytes of the last round the node's log records for the volume (the handoff's, once promoted). */
    static long handoffBytes(String n, String id) throws IOException {
        long bytes = -1;
        for (String line : Files.readAllLines(work.resolve(n + ".err"))) {
            var m = HOLDS.matcher(line);
            if (m.find() && m.group(1).equals(id)) bytes = Long.parseLong(m.group(2));
        }
        return bytes;
    }

    static Map<String, Double> metrics(String n, String id) throws Exception {
        String page = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://" + METRICS.get(n) + "/metrics")).build(), java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        Map<String, Double> m = new HashMap<>();
        String labels = "{volume=\"" + id + "\",node=\"" + n + "\"} ";
        for (String l : page.lines().toList()) {
            int at = l.indexOf(labels);
            if (l.startsWith("csi4j_replica_") && at > 0) m.put(l.substring(0, at), Double.parseDouble(l.substring(at + labels.length())));
        }
        return m;
    }

    static Optional<Double> metric(String n, String name, String id) throws Exception {
        return Optional.ofNullable(metrics(n, id).get(name));
    }

    /** p99Ms/maxMs: a write's completion latency in ms, plus its fsync's p99/max when the job syncs (fio's "sync" section): a bound, not a percentile of the sum. */
    record Fio(long writeBytes, double writeIops, double readIops, double p99Ms, double maxMs) {}

    static final Pattern WRITE_CLAT = Pattern.compile("\"write\" : \\{.*?\"clat_ns\" : \\{\\s*\"min\" : \\d+,\\s*\"max\" : (\\d+),.*?\"99.000000\" : (\\d+)", Pattern.DOTALL);
    static final Pattern SYNC_LAT = Pattern.compile("\"sync\" : \\{.*?\"lat_ns\" : \\{\\s*\"min\" : \\d+,\\s*\"max\" : (\\d+),.*?\"99.000000\" : (\\d+)", Pattern.DOTALL);

    static final Pattern SECTION = Pattern.compile("\"(read|write)\" : \\{\\s*\"io_bytes\" : (\\d+),[^}]*?\"iops\" : ([0-9.]+)");

    static Fio fio(String name, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("fio", "--name=" + name, "--output-format=json"));
        cmd.addAll(List.of(args));
        var p = new ProcessBuilder(cmd).redirectErrorStream(false).start();
        String out = new String(p.getInputStream().readAllBytes());
        String err = new String(p.getErrorStream().readAllBytes());
        if (p.waitFor() != 0) throw new IllegalStateException("fio failed: " + String.join(" ", cmd) + "\n" + err + out);
        long wb = 0;
        double wi = 0, ri = 0;
        var m = SECTION.matcher(out);
        while (m.find()) {
            if (m.group(1).equals("write")) { wb = Long.parseLong(m.group(2)); wi = Double.parseDouble(m.group(3)); }
            else ri = Double.parseDouble(m.group(3));
        }
        double p99 = 0, max = 0;
        var c = WRITE_CLAT.matcher(out);
        if (c.find()) { max = Long.parseLong(c.group(1)) / 1e6; p99 = Long.parseLong(c.group(2)) / 1e6; }
        var y = SYNC_LAT.matcher(out);
        if (y.find()) { max += Long.parseLong(y.group(1)) / 1e6; p99 += Long.parseLong(y.group(2)) / 1e6; }
        return new Fio(wb, wi, ri, p99, max);
    }

    static long crc(Path file) throws IOException {
        var c = new java.util.zip.CRC32C();
        try (var ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocateDirect((int) (4 * MIB));
            while (ch.read(b) > 0) { b.flip(); c.update(b); b.clear(); }
        }
        return c.getValue();
    }

    /** CPU seconds of each agent so far, user and system apart (in the order of CSI4J_BENCH_AGENTS). */
    record Cpu(double[] user, double[] sys) {
        double userTotal() { return Arrays.stream(user).sum(); }
        double sysTotal() { return Arrays.stream(sys).sum(); }
        double total() { return userTotal() + sysTotal(); }
        Cpu minus(Cpu o) {
            double[] u = user.clone(), y = sys.clone();
            for (int i = 0; i < u.length; i++) { u[i] -= o.user[i]; y[i] -= o.sys[i]; }
            return new Cpu(u, y);
        }
    }

    /** From /proc/PID/stat of CSI4J_BENCH_AGENT_PIDS: utime and stime (kernel work: FICLONE, FIEMAP, fsync, copy-on-write). */
    static Cpu agentsCpu() throws IOException {
        String[] each = System.getenv("CSI4J_BENCH_AGENT_PIDS").trim().split(" +");
        double[] user = new double[each.length], sys = new double[each.length];
        for (int i = 0; i < each.length; i++) {
            String stat = Files.readString(Path.of("/proc/" + each[i] + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            user[i] = Long.parseLong(f[11]) / 100.0;   // utime, stime in USER_HZ
            sys[i] = Long.parseLong(f[12]) / 100.0;
        }
        return new Cpu(user, sys);
    }

    static double load() throws IOException {
        return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
    }

    static double pct(double[] v, double q) {
        if (v.length == 0) return Double.NaN;
        double[] s = v.clone();
        Arrays.sort(s);
        return s[(int) Math.min(s.length - 1, Math.floor(q * s.length))];
    }

    static String med(List<Double> v) {
        return med(v.stream().mapToDouble(d -> d).toArray(), "%.0f");
    }

    /** "median (min-max)". */
    static String med(double[] v, String f) {
        double[] s = v.clone();
        Arrays.sort(s);
        return String.format(f + " (" + f + "-" + f + ")", s[s.length / 2], s[0], s[s.length - 1]);
    }

    static String fmt(double[] v) {
        StringBuilder b = new StringBuilder();
        for (double d : v) b.append(b.isEmpty() ? "" : " ").append(String.format("%.3f", d));
        return b.toString();
    }
}
