import io.csi4j.proto.csi.IdentityGrpc;
import io.csi4j.proto.csi.ProbeRequest;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Not a test: measures {@code ./csi4j serve} as people start it, through the launcher. For each JVM flag set
 * (given as CSI4J_JAVA_OPTS / CSI4J_AOT): the time from starting the launcher to the first answered Probe on
 * the socket (polled by this JVM, whose client is warmed up first), and the resident memory after the plugin
 * idled. Medians of {@code runs} starts; the first start of a flag set (which may train its AOT cache) is not
 * counted. Usage (scripts/bench-startup): {@code java -cp <cli jars> scripts/ServeStartup.java ROOT WORK runs
 * idle-seconds [--pool-size SIZE] NAME=ENV... }, ENV being {@code CSI4J_JAVA_OPTS=...;CSI4J_AOT=0}.
 */
public final class ServeStartup {
    public static void main(String[] args) throws Exception {
        Path root = Path.of(args[0]);
        Path work = Path.of(args[1]);
        int runs = Integer.parseInt(args[2]);
        int idle = Integer.parseInt(args[3]);
        int next = 4;
        List<String> extra = new ArrayList<>();
        if (args.length > next && args[next].equals("--pool-size")) {
            extra = List.of("--pool-size", args[next + 1]);
            next += 2;
        }
        System.out.printf(Locale.ROOT, "%-44s %10s %10s %12s%n", "flags", "probe p50", "probe min", "idle RSS p50");
        for (int i = next; i < args.length; i++) {
            String name = args[i].substring(0, args[i].indexOf('='));
            Map<String, String> env = parseEnv(args[i].substring(args[i].indexOf('=') + 1));
            Path data = work.resolve("startup-" + (i - next));
            double[] ms = new double[runs];
            double[] rss = new double[runs];
            measure(root, data, extra, env, 0);  // trains the AOT cache if it must, creates the pool, warms this client
            for (int r = 0; r < runs; r++) {
                double[] one = measure(root, data, extra, env, idle);
                ms[r] = one[0];
                rss[r] = one[1];
            }
            System.out.printf(Locale.ROOT, "%-44s %7.0f ms %7.0f ms %8.1f MiB%n", name, median(ms),
                    Arrays.stream(ms).min().orElseThrow(), median(rss));
        }
    }

    private static Map<String, String> parseEnv(String spec) {
        var env = new java.util.HashMap<String, String>();
        for (String kv : spec.split(";")) {
            if (kv.isBlank()) continue;
            env.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
        return env;
    }

    private static double[] measure(Path root, Path data, List<String> extra, Map<String, String> env, int idle)
            throws Exception {
        Files.createDirectories(data);
        Path socket = data.resolve("csi.sock");
        List<String> command = new ArrayList<>(List.of(root.resolve("csi4j").toString(), "serve", "--data-dir",
                data.toString(), "--node-id", "startup", "--csi-addons-endpoint", "none"));
        command.addAll(extra);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(data.resolveSibling(data.getFileName() + ".log").toFile());
        builder.environment().putAll(env);
        builder.environment().put("CSI4J_NO_BUILD", "1");
        Files.deleteIfExists(socket);
        long start = System.nanoTime();
        Process process = builder.start();
        ManagedChannel channel = null;
        try {
            while (!Files.exists(socket)) {
                if (!process.isAlive()) throw new IllegalStateException("serve died, see " + data + ".log");
                Thread.sleep(0, 500_000);
            }
            channel = Channels.connect(new Endpoint.Unix(socket));
            var identity = IdentityGrpc.newBlockingStub(channel);
            while (true) {
                try {
                    identity.withDeadlineAfter(10, TimeUnit.SECONDS).probe(ProbeRequest.getDefaultInstance());
                    break;
                } catch (StatusRuntimeException notYet) {
                    Thread.sleep(0, 500_000);
                }
            }
            double firstProbeMs = (System.nanoTime() - start) / 1e6;
            Thread.sleep(idle * 1000L);
            return new double[] {firstProbeMs, rssMiB(process.pid())};
        } finally {
            if (channel != null) channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            process.destroy();  // SIGTERM: serve stops gracefully (the pool stays mounted for the next start)
            if (!process.waitFor(30, TimeUnit.SECONDS)) process.destroyForcibly().waitFor();
        }
    }

    private static double rssMiB(long pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
        }
        throw new IllegalStateException("no VmRSS for " + pid);
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
