package io.csi4j.sdk.example;

import io.csi4j.proto.csi.GetPluginInfoRequest;
import io.csi4j.proto.csi.IdentityGrpc;
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
import java.util.concurrent.TimeUnit;

/**
 * Measures the example plugin as a process: time from launching the JVM to the first answered call (a
 * GetPluginInfo over the socket), and resident memory after it idles. Runs each flag set {@code runs} times
 * and prints medians. Usage: {@code StartupMeasure [runs] [idle-seconds]}.
 */
public final class StartupMeasure {
    record Config(String name, List<String> flags) {}

    private static String classpath;

    /** The test classpath with class directories packed into jars: an AOT cache accepts only jars. */
    private static String jarredClasspath(Path dir) throws Exception {
        List<String> out = new ArrayList<>();
        int n = 0;
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            Path path = Path.of(entry);
            if (!Files.isDirectory(path)) {
                out.add(entry);
                continue;
            }
            Path jar = dir.resolve("classes-" + (n++) + ".jar");
            int rc = java.util.spi.ToolProvider.findFirst("jar").orElseThrow()
                    .run(System.out, System.err, "--create", "--file", jar.toString(), "-C", path.toString(), ".");
            if (rc != 0) throw new IllegalStateException("jar failed for " + path);
            out.add(jar.toString());
        }
        return String.join(java.io.File.pathSeparator, out);
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int idleSeconds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        Path dir = Files.createTempDirectory("csi4j-startup");
        Path aot = dir.resolve("plugin.aot");
        List<Config> configs = List.of(
                new Config("default", List.of()),
                new Config("-XX:+UseSerialGC -XX:TieredStopAtLevel=1", List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")),
                new Config("-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx64m", List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx64m")),
                new Config("serial+C1 + AOT cache", List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:AOTCache=" + aot)));
        classpath = jarredClasspath(dir);
        warmUpClient(dir);
        System.out.printf(Locale.ROOT, "runs=%d idle=%ds cpus=%d java=%s%n", runs, idleSeconds,
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
        for (Config config : configs) {
            if (config.flags().stream().anyMatch(f -> f.startsWith("-XX:AOTCache="))) train(dir, aot);
            double[] firstCallMs = new double[runs];
            double[] rssMiB = new double[runs];
            for (int i = 0; i < runs; i++) {
                double[] one = measure(dir, config.flags(), idleSeconds);
                firstCallMs[i] = one[0];
                rssMiB[i] = one[1];
            }
            System.out.printf(Locale.ROOT, "%-52s first call %6.0f ms (min %4.0f)   idle RSS %5.1f MiB%n",
                    config.name(), median(firstCallMs), Arrays.stream(firstCallMs).min().orElseThrow(), median(rssMiB));
        }
    }

    /** A training run that writes the AOT cache at exit (JDK 25: -XX:AOTCacheOutput). */
    private static void train(Path dir, Path aot) throws Exception {
        Files.deleteIfExists(aot);
        measure(dir, List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:AOTCacheOutput=" + aot), 1);
        if (!Files.exists(aot)) throw new IllegalStateException("no AOT cache written");
    }

    private static double[] measure(Path dir, List<String> flags, int idleSeconds) throws Exception {
        Path socket = dir.resolve("csi.sock");
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElseThrow());
        command.add("--enable-native-access=ALL-UNNAMED");
        command.addAll(flags);
        command.addAll(List.of("-cp", classpath, ExamplePluginMain.class.getName()));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve("plugin.log").toFile());
        builder.environment().put("CSI_ENDPOINT", "unix://" + socket);
        long start = System.nanoTime();
        Process process = builder.start();
        ManagedChannel channel = null;
        try {
            while (!Files.exists(socket)) {
                if (!process.isAlive()) throw new IllegalStateException("plugin died: " + Files.readString(dir.resolve("plugin.log")));
                Thread.sleep(1);
            }
            channel = Channels.connect(new Endpoint.Unix(socket));
            while (true) {
                try {
                    IdentityGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
                            .getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
                    break;
                } catch (StatusRuntimeException notYet) {
                    Thread.sleep(1);
                }
            }
            double firstCallMs = (System.nanoTime() - start) / 1e6;
            Thread.sleep(idleSeconds * 1000L);
            double rss = rssMiB(process.pid());
            return new double[] {firstCallMs, rss};
        } finally {
            if (channel != null) channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) process.destroyForcibly().waitFor();
            if (process.exitValue() != 0) throw new IllegalStateException("exit " + process.exitValue());
        }
    }

    private static double rssMiB(long pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
        }
        throw new IllegalStateException("no VmRSS");
    }

    private static void warmUpClient(Path dir) throws Exception {
        // load the client side's classes once, so the first measured run is not slowed by this JVM
        measure(dir, List.of(), 0);
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
