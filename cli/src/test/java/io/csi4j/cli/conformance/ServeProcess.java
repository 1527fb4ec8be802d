package io.csi4j.cli.conformance;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code csi4j serve} as a child process, the way a cluster runs it: its own JVM, its own socket.
 * Started from the test's class path (so no nested build); stopped with SIGTERM.
 */
final class ServeProcess implements AutoCloseable {
    final Path dataDir;
    final String startupLine;
    private final Process process;
    private final StringBuffer stderr = new StringBuffer();

    private ServeProcess(Path dataDir, Process process, String startupLine) {
        this.dataDir = dataDir;
        this.process = process;
        this.startupLine = startupLine;
    }

    static ServeProcess start(Path dataDir, String... flags) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"), "io.csi4j.cli.Main", "serve",
                "--data-dir", dataDir.toString(), "--node-id", "node-1"));
        // serve's default makes a thin XFS pool image on ext4; a test that wants one says its size
        if (!List.of(flags).contains("--pool-size")) command.addAll(List.of("--pool-size", "0"));
        command.addAll(List.of(flags));
        Process process = new ProcessBuilder(command).start();
        var reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                return reader.readLine();
            } catch (IOException e) {
                return null;
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
        if (first == null || !Files.exists(dataDir.resolve("csi.sock"))) {
            process.destroyForcibly();
            throw new IllegalStateException("csi4j serve did not start: " + err);
        }
        var serve = new ServeProcess(dataDir, process, first);
        serve.stderr.append(err);
        return serve;
    }

    String endpoint() {
        return "unix://" + dataDir.resolve("csi.sock");
    }

    /** SIGTERM, then the exit code (0 for a graceful stop). */
    int stop(Duration grace) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            process.waitFor();
            return -1;
        }
        return process.exitValue();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) stop(Duration.ofSeconds(30));
    }
}
