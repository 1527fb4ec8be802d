// Not a test: the cluster benchmarks of issue 15, run by scripts/bench-cluster against processes it started.
//   overhead CONTROLLER_SOCKET AGENT_HOST:PORT CERT KEY CA NODE ITERATIONS
//       CreateVolume+DeleteVolume (1 MiB, on NODE) through the controller and straight to the agent endpoint
//       (mutual TLS), interleaved call by call so both see the same machine, after WARM_PAIRS each way; p50/p99
//       of each; then 5x as many ControllerGetVolume (no storage work: routing itself) both ways, CreateVolume
//       repeated with one name (idempotent: the mutating path without storage work) both ways, and create+delete
//       once more (the steady state, after every phase before it).
//   fill CONTROLLER_SOCKET TOTAL NODE,NODE,...   creates volumes up to TOTAL, round robin over the nodes (16 at once)
//   list CONTROLLER_SOCKET ROUNDS                every volume through pages of 500; min/p50 of ROUNDS full listings
//   createdelete CONTROLLER_SOCKET NODE ITERATIONS   p50/p99 of create+delete through the controller
// Usage: java -cp "cli/target/csi4j.jar:cli/target/lib/*" scripts/ClusterBench.java MODE ARGS...
import io.csi4j.proto.csi.*;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.MutualTls;
import java.nio.file.Path;
import java.util.*;
import java.util.concurrent.*;

public class ClusterBench {
    static final VolumeCapability CAP = VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.getDefaultInstance())
            .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();

    static CreateVolumeRequest create(String name, String node) {
        var b = CreateVolumeRequest.newBuilder().setName(name).addVolumeCapabilities(CAP)
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(1 << 20));
        if (node != null) {
            var t = Topology.newBuilder().putSegments("topology.csi4j.io/node", node).build();
            b.setAccessibilityRequirements(TopologyRequirement.newBuilder().addRequisite(t).addPreferred(t));
        }
        return b.build();
    }

    static ControllerGrpc.ControllerBlockingStub controller(String socket) {
        return ControllerGrpc.newBlockingStub(Channels.builder(Endpoint.parse(socket)).maxInboundMessageSize(64 << 20).build());
    }

    /**
     * Create+delete pairs each way before the timed ones: C2 compiles a per-call path after 5,000-15,000 calls, in the
     * controller and in the agent. With 1,000 (until 2026-11-25) the timed pairs measured that compiling: +0.44 to
     * +0.46 ms per call, +0.22 to +0.30 after 6,000, +0.16 after 10,000, the same as in the steady state at the end
     * (docs/cluster.md).
     */
    static final int WARM_PAIRS = 10000;

    /** One create+delete pair, in microseconds. */
    static long pair(ControllerGrpc.ControllerBlockingStub c, String name, String node) {
        long t0 = System.nanoTime();
        var v = c.createVolume(create(name, node)).getVolume();
        c.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).build());
        return (System.nanoTime() - t0) / 1000;
    }

    /** {@code warm} calls each way, then {@code n} timed, alternated call by call; sorted microseconds of each way. */
    static long[][] interleaved(int warm, int n, Runnable routed, Runnable direct) {
        for (int i = 0; i < warm; i++) { routed.run(); direct.run(); }
        long[] r = new long[n], d = new long[n];
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime(); routed.run(); r[i] = (System.nanoTime() - t0) / 1000;
            t0 = System.nanoTime(); direct.run(); d[i] = (System.nanoTime() - t0) / 1000;
        }
        Arrays.sort(r);
        Arrays.sort(d);
        return new long[][] {r, d};
    }

    static double pct(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100 * sorted.length) - 1)] / 1000.0;
    }

    public static void main(String[] a) throws Exception {
        switch (a[0]) {
            case "overhead" -> {
                var routed = controller(a[1]);
                String[] hp = a[2].split(":");
                var tls = new MutualTls(Path.of(a[3]), Path.of(a[4]), Path.of(a[5]));
                var direct = ControllerGrpc.newBlockingStub(Channels.builder(new Endpoint.Tcp(hp[0], Integer.parseInt(hp[1])), tls, hp[0]).build());
                String node = a[6];
                int n = Integer.parseInt(a[7]);
                // interleaved, so both see the same moments of a busy machine
                long[][] pairs = interleaved(WARM_PAIRS, n, () -> pair(routed, "r-" + UUID.randomUUID(), node),
                        () -> pair(direct, "d-" + UUID.randomUUID(), node));
                long[] r = pairs[0], d = pairs[1];
                // a call the agent answers from its catalog, no storage work: what routing itself costs
                String id = routed.createVolume(create("get-target", node)).getVolume().getVolumeId();
                var get = ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build();
                int m = 5 * n;
                long[][] g = interleaved(Math.min(m, 2000), m, () -> routed.controllerGetVolume(get), () -> direct.controllerGetVolume(get));
                long[] gr = g[0], gd = g[1];
                // CreateVolume repeated with the same name and shape: the agent answers from its catalog (idempotent, no
                // storage work), so this is the mutating path's routing without the disk's wait in the middle
                var again = create("get-target", node);
                long[][] c2 = interleaved(Math.min(n, 500), n, () -> routed.createVolume(again), () -> direct.createVolume(again));
                long[] cr = c2[0], cd = c2[1];
                // create+delete once more, now that the controller has served every phase above: the first measurement
                // starts after only 2,000 routed calls, when C2 has not compiled the per-call paths yet
                long[][] late = interleaved(0, n, () -> pair(routed, "r-" + UUID.randomUUID(), node),
                        () -> pair(direct, "d-" + UUID.randomUUID(), node));
                System.out.printf("create+delete pairs: %d each after %d warm-up pairs each way, 1 MiB, node %s, one client%n", n, WARM_PAIRS, node);
                System.out.printf("through the controller (UNIX socket -> mTLS): p50 %.3f ms  p99 %.3f ms%n", pct(r, 50), pct(r, 99));
                System.out.printf("straight to the agent (mTLS):                 p50 %.3f ms  p99 %.3f ms%n", pct(d, 50), pct(d, 99));
                System.out.printf("routing overhead per pair:                     p50 %+.3f ms  p99 %+.3f ms (two calls: %+.3f ms p50 per call)%n",
                        pct(r, 50) - pct(d, 50), pct(r, 99) - pct(d, 99), (pct(r, 50) - pct(d, 50)) / 2);
                System.out.printf("create+delete again after the phases below (controller warm): through the controller p50 %.3f ms; straight p50 %.3f ms; overhead per pair p50 %+.3f ms (two calls: %+.3f ms p50 per call)%n",
                        pct(late[0], 50), pct(late[1], 50), pct(late[0], 50) - pct(late[1], 50), (pct(late[0], 50) - pct(late[1], 50)) / 2);
                System.out.printf("calls through the controller: %d%n", 2 * WARM_PAIRS + 2 * n + 1 + Math.min(m, 2000) + m + Math.min(n, 500) + n + 2 * n);
                System.out.printf("ControllerGetVolume, %d each: through the controller p50 %.3f ms p99 %.3f ms; straight p50 %.3f ms p99 %.3f ms; overhead p50 %+.3f ms p99 %+.3f ms%n",
                        m, pct(gr, 50), pct(gr, 99), pct(gd, 50), pct(gd, 99), pct(gr, 50) - pct(gd, 50), pct(gr, 99) - pct(gd, 99));
                System.out.printf("CreateVolume repeated (idempotent: no storage work), %d each: through the controller p50 %.3f ms p99 %.3f ms; straight p50 %.3f ms p99 %.3f ms; overhead p50 %+.3f ms p99 %+.3f ms%n",
                        n, pct(cr, 50), pct(cr, 99), pct(cd, 50), pct(cd, 99), pct(cr, 50) - pct(cd, 50), pct(cr, 99) - pct(cd, 99));
            }
            case "fill" -> {
                var c = controller(a[1]);
                int total = Integer.parseInt(a[2]);
                String[] nodes = a[3].split(",");
                int have = count(c);
                long t0 = System.nanoTime();
                var pool = Executors.newFixedThreadPool(16);
                List<Future<?>> fs = new ArrayList<>();
                for (int i = have; i < total; i++) { int k = i; fs.add(pool.submit(() -> c.createVolume(create("fill-" + k, nodes[k % nodes.length])))); }
                for (var f : fs) f.get();
                pool.shutdown();
                System.out.printf("filled %d -> %d volumes over %d nodes in %.1f s%n", have, total, nodes.length, (System.nanoTime() - t0) / 1e9);
            }
            case "list" -> {
                var c = controller(a[1]);
                int rounds = Integer.parseInt(a[2]);
                long[] t = new long[rounds];
                int n = 0, pages = 0;
                for (int i = 0; i < rounds; i++) {
                    long t0 = System.nanoTime();
                    n = 0; pages = 0;
                    String tok = "";
                    do {
                        var r = c.listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(500).setStartingToken(tok).build());
                        n += r.getEntriesCount(); pages++;
                        tok = r.getNextToken();
                    } while (!tok.isEmpty());
                    t[i] = (System.nanoTime() - t0) / 1000;
                }
                Arrays.sort(t);
                System.out.printf("ListVolumes of %d volumes in %d pages of 500 through the controller: min %.1f ms  p50 %.1f ms  max %.1f ms (%d rounds); p50 per page %.2f ms%n",
                        n, pages, t[0] / 1000.0, pct(t, 50), t[rounds - 1] / 1000.0, rounds, pct(t, 50) / pages);
            }
            case "createdelete" -> {
                var c = controller(a[1]);
                String node = a[2];
                int n = Integer.parseInt(a[3]);
                for (int i = 0; i < Math.min(n, 500); i++) pair(c, "cdw-" + i, node);
                long[] r = new long[n];
                for (int i = 0; i < n; i++) r[i] = pair(c, "cd-" + i, node);
                Arrays.sort(r);
                System.out.printf("create+delete through the controller, %d pairs on %s: p50 %.3f ms  p99 %.3f ms%n", n, node, pct(r, 50), pct(r, 99));
            }
            default -> throw new IllegalArgumentException(a[0]);
        }
        System.exit(0);
    }

    static int count(ControllerGrpc.ControllerBlockingStub c) {
        int n = 0;
        String tok = "";
        do {
            var r = c.listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(500).setStartingToken(tok).build());
            n += r.getEntriesCount();
            tok = r.getNextToken();
        } while (!tok.isEmpty());
        return n;
    }
}
