package io.csi4j.cli.reliability;

import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code csi4j serve} as a child JVM started from the test class path, which the tests kill with
 * SIGKILL (a crash) or stop with SIGTERM. Its stderr is kept whole, for the tests that read the logs.
 */
final class Plugin implements AutoCloseable {
    final Path dataDir;
    final String startupLine;
    private final Process process;
    private final StringBuffer stderr;
    private final List<ManagedChannel> channels = new ArrayList<>();

    private Plugin(Path dataDir, Process process, String startupLine, StringBuffer stderr) {
        this.dataDir = dataDir;
        this.process = process;
        this.startupLine = startupLine;
        this.stderr = stderr;
    }

    /** What a {@code csi4j} command run to its end printed, and its exit code. */
    record Run(int exit, String stdout, String stderr) {}

    /** Runs {@code csi4j <args>} as a child JVM to its end (at most two minutes). */
    static Run run(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), "io.csi4j.cli.Main"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).start();
        var out = CompletableFuture.supplyAsync(() -> readAll(p.getInputStream()));
        var err = CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()));
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("csi4j " + args[0] + " did not finish: " + err.getNow(""));
        }
        return new Run(p.exitValue(), out.join(), err.join());
    }

    private static String readAll(java.io.InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    /** The serve command line: java, the test class path, {@code serve --data-dir D --node-id node-1} and flags. */
    static List<String> command(Path dataDir, String... flags) {
        return command(dataDir, List.of(), flags);
    }

    static List<String> command(Path dataDir, List<String> jvmOptions, String... flags) {
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-Xshare:auto"));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.csi4j.cli.Main", "serve",
                "--data-dir", dataDir.toString(), "--node-id", "node-1"));
        // serve's default makes a thin XFS pool image on ext4; a test that wants one says its size
        if (!List.of(flags).contains("--pool-size")) command.addAll(List.of("--pool-size", "0"));
        command.addAll(List.of(flags));
        return command;
    }

    static final java.util.concurrent.atomic.AtomicLong STARTS = new java.util.concurrent.atomic.AtomicLong();
    static final java.util.concurrent.atomic.AtomicLong START_NANOS = new java.util.concurrent.atomic.AtomicLong();

    /** Mean start-up time so far (spawn to the start-up line), in milliseconds. */
    static long meanStartMillis() {
        return STARTS.get() == 0 ? 0 : START_NANOS.get() / STARTS.get() / 1_000_000;
    }

    static Plugin start(Path dataDir, String... flags) throws IOException {
        return start(dataDir, List.of(), flags);
    }

    /** A plugin serving CSI on a TCP {@code endpoint} instead of its data directory's socket. */
    static Plugin startTcp(Path dataDir, String endpoint, String... flags) throws IOException {
        List<String> all = new ArrayList<>(List.of("--endpoint", endpoint));
        all.addAll(List.of(flags));
        return start(dataDir, List.of(), true, all.toArray(String[]::new));
    }

    static Plugin start(Path dataDir, List<String> jvmOptions, String... flags) throws IOException {
        return start(dataDir, jvmOptions, false, flags);
    }

    /** A plugin whose tools are looked up in {@code tools} first (a test's stand-in for one of them). */
    static Plugin startWithTools(Path dataDir, Path tools, String... flags) throws IOException {
        return start(dataDir, List.of(), false, tools, flags);
    }

    private static Plugin start(Path dataDir, List<String> jvmOptions, boolean tcp, String... flags) throws IOException {
        return start(dataDir, jvmOptions, tcp, null, flags);
    }

    private static Plugin start(Path dataDir, List<String> jvmOptions, boolean tcp, Path tools, String... flags) throws IOException {
        long t0 = System.nanoTime();
        ProcessBuilder builder = new ProcessBuilder(command(dataDir, jvmOptions, flags));
        if (tools != null) builder.environment().merge("PATH", tools.toString(), (path, first) -> first + ":" + path);
        Process process = builder.start();
        var reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> line = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                line.complete(reader.readLine());
                while (reader.readLine() != null) { /* drain */ }
            } catch (IOException e) {
                line.complete(null);
            }
        });
        StringBuffer err = new StringBuffer();
        Thread.ofVirtual().start(() -> {
            try (var r = new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) err.append(l).append('\n');
            } catch (IOException ignored) {
                // process ended
            }
        });
        String first;
        try {
            first = line.get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            process.destroyForcibly();
            throw new IllegalStateException("csi4j serve did not start: " + err, e);
        }
        if (first == null || (!tcp && !Files.exists(dataDir.resolve("csi.sock")))) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
                Thread.sleep(100);   // let the stderr reader catch up
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("csi4j serve did not start (exit " + (process.isAlive() ? "?" : process.exitValue())
                    + "): " + err);
        }
        STARTS.incrementAndGet();
        START_NANOS.addAndGet(System.nanoTime() - t0);
        return new Plugin(dataDir, process, first, err);
    }

    long pid() {
        return process.pid();
    }

    boolean alive() {
        return process.isAlive();
    }

    String stderr() {
        return stderr.toString();
    }

    String endpoint() {
        return "unix://" + dataDir.resolve("csi.sock");
    }

    /** A fresh channel to the CSI socket, shut down when the plugin is closed or killed. */
    synchronized ManagedChannel channel() {
        var channel = Channels.builder(Endpoint.parse(endpoint())).maxInboundMessageSize(64 << 20).build();
        channels.add(channel);
        return channel;
    }

    /** A fresh channel to the CSI-Addons socket, or null when this plugin serves none. */
    synchronized ManagedChannel addonsChannel() {
        Path socket = dataDir.resolve("csi-addons.sock");
        if (!Files.exists(socket)) return null;
        var channel = Channels.connect(Endpoint.parse("unix://" + socket));
        channels.add(channel);
        return channel;
    }

    /** SIGKILL: the crash. Returns when the process is gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
        closeChannels();
    }

    /** SIGTERM, then the exit code (-1 if it had to be killed after the grace period). */
    int stop(long graceMillis) throws InterruptedException {
        process.destroy();
        int code = -1;
        if (process.waitFor(graceMillis, TimeUnit.MILLISECONDS)) {
            code = process.exitValue();
        } else {
            process.destroyForcibly();
            process.waitFor();
        }
        closeChannels();
        return code;
    }

    private synchronized void closeChannels() {
        channels.forEach(ManagedChannel::shutdownNow);
        channels.clear();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) stop(30_000);
        closeChannels();
    }
}
