package io.csi4j.cli.cluster;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** {@code csi4j serve} with the given flags as a child process, from the test's class path; stopped with SIGTERM. */
final class ServeChild implements AutoCloseable {
    final String startupLine;
    private final Process process;
    private final StringBuffer stderr;
    /** Everything it printed to stdout after the start-up line. */
    private final StringBuffer stdout = new StringBuffer();

    private ServeChild(Process process, String startupLine, StringBuffer stderr, BufferedReader out) {
        this.process = process;
        this.startupLine = startupLine;
        this.stderr = stderr;
        // keep draining stdout: a full pipe would block the child
        Thread.ofVirtual().start(() -> {
            try (out) {
                for (String l; (l = out.readLine()) != null; ) stdout.append(l).append('\n');
            } catch (IOException ignored) {
                // the process ended
            }
        });
    }

    /** Starts and waits for the one start-up line (printed once every endpoint is served). */
    static ServeChild start(List<String> flags) throws IOException {
        return start(List.of(), flags);
    }

    /** With JVM options before the main class, e.g. {@code -Djdk.net.hosts.file=...}. */
    static ServeChild start(List<String> jvmOptions, List<String> flags) throws IOException {
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-XX:+UseSerialGC"));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.csi4j.cli.Main", "serve"));
        // serve's default makes a thin XFS pool image on ext4; a test that wants one says its size
        if (!flags.contains("--pool-size")) command.addAll(List.of("--pool-size", "0"));
        command.addAll(flags);
        Process process = new ProcessBuilder(command).start();
        StringBuffer err = new StringBuffer();
        Thread.ofVirtual().start(() -> {
            try (var r = new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) err.append(l).append('\n');
            } catch (IOException ignored) {
                // the process ended
            }
        });
        var out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String line;
        try {
            line = CompletableFuture.supplyAsync(() -> {
                try {
                    return out.readLine();
                } catch (IOException e) {
                    return null;
                }
            }).get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            line = null;
        }
        if (line == null) {
            process.destroyForcibly();
            throw new IllegalStateException("csi4j serve " + flags + " did not start:\n" + err);
        }
        return new ServeChild(process, line, err, out);
    }

    /** The value of {@code key=} in the start-up line, e.g. the agent endpoint a port 0 became. */
    String field(String key) {
        for (String word : startupLine.split(" ")) if (word.startsWith(key + "=")) return word.substring(key.length() + 1);
        throw new IllegalStateException("no " + key + "= in: " + startupLine);
    }

    String stderr() {
        return stderr.toString();
    }

    String stdout() {
        return startupLine + "\n" + stdout;
    }

    long pid() {
        return process.pid();
    }

    boolean alive() {
        return process.isAlive();
    }

    /** SIGKILL, and wait until it is gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** Sends a signal by name (STOP, CONT) to the child. */
    void signal(String name) throws IOException, InterruptedException {
        var kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) throw new IOException("kill -" + name + " failed");
    }

    /** SIGTERM and the exit code. */
    int stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor();
            return -1;
        }
        return process.exitValue();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) stop();
    }
}
