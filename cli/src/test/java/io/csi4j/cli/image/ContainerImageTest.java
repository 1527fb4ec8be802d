package io.csi4j.cli.image;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.cli.Main;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.csi.GetPluginInfoRequest;
import io.csi4j.proto.csi.IdentityGrpc;
import io.csi4j.proto.csi.ProbeRequest;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The image as a cluster runs it, under podman: {@code scripts/image} builds it (or CSI4J_IMAGE_TAR names a
 * docker-archive already built), podman loads the tarball into a private store, a node agent container runs
 * privileged with /dev and a host data directory (Bidirectional propagation of the test's directory, so what it
 * mounts the host sees), a controller container runs as uid 65532 with every capability dropped and a read-only
 * root; both on the host network, the agent link on 127.0.0.1 with certificates from {@code csi4j certs}. The
 * conformance suite runs from the host against the controller's socket and the agent's node socket.
 * Also measured: start-up (container start to Probe answered) and idle RSS of each role, written to
 * target/image/measurements.txt. Runs in the integration-test phase (it needs the packaged jars); needs root and
 * podman, and fails rather than skips with CI=true.
 */
class ContainerImageTest {
    private static final Path ROOT = findRoot();

    @Test
    void bothRolesRunAndTheSuiteIsGreen(@TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        boolean prebuilt = System.getenv("CSI4J_IMAGE_TAR") != null && !System.getenv("CSI4J_IMAGE_TAR").isBlank();
        Privileged.require(onPath("podman") && onPath("runc") && (prebuilt || onPath("mmdebstrap")),
                "podman, runc and mmdebstrap (Debian packages; ./test installs them as root)");
        Path tar = imageTar();
        // podman's store and run state are the test's own; the host's /tmp may be private: a shared bind mount of
        // the test directory lets the agent's mounts propagate back to the host (what kubelet's directory gets)
        Path base = Files.createDirectories(tmp.resolve("t"));
        run(List.of("mount", "--bind", base.toString(), base.toString()));
        List<String> containers = new ArrayList<>();
        Podman podman = new Podman(tmp.resolve("podman"));
        try {
            run(List.of("mount", "--make-rshared", base.toString()));
            String loaded = podman.run("load", "-i", tar.toString());
            String image = Files.readString(tar.resolveSibling("tag")).strip();
            assertTrue(loaded.contains(image) || loaded.contains("Loaded image"), loaded);

            Path pki = base.resolve("pki");
            assertEquals(0, quiet("certs", "--out", pki.toString(), "--agent-name", "127.0.0.1"));
            // the controller's key is readable by the controller's user only
            run(List.of("chown", "65532:65532", pki.resolve("controller-key.pem").toString()));
            Path agentData = Files.createDirectories(base.resolve("agent"));
            Path controllerData = Files.createDirectories(base.resolve("controller"));
            run(List.of("chown", "65532:65532", controllerData.toString()));
            int port;
            try (var probe = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
                port = probe.getLocalPort();
            }

            var measure = new StringBuilder();
            long runtimeOverhead = podman.startupOverheadMillis(image);
            podman.run("create", "--name", "csi4j-agent", "--privileged", "--network", "host", "-v", "/dev:/dev",
                    "-v", base + ":" + base + ":rshared", "-v", pki + ":/etc/csi4j/tls:ro", image,
                    "serve", "--mode", "node", "--node-id", "node-a", "--data-dir", agentData.toString(), "--pool-size", "8Gi",
                    "--agent-endpoint", "tcp://127.0.0.1:" + port, "--tls-cert", "/etc/csi4j/tls/agent.pem",
                    "--tls-key", "/etc/csi4j/tls/agent-key.pem", "--tls-ca", "/etc/csi4j/tls/ca.pem");
            containers.add("csi4j-agent");
            long agentMs = podman.startAndAwait("csi4j-agent", agentData.resolve("csi.sock"));
            podman.run("create", "--name", "csi4j-controller", "--user", "65532:65532", "--cap-drop=all",
                    "--security-opt", "no-new-privileges", "--read-only", "--network", "host",
                    "-v", controllerData + ":" + controllerData, "-v", pki + ":/etc/csi4j/tls:ro", image,
                    "serve", "--mode", "controller", "--data-dir", controllerData.toString(), "--agents", "127.0.0.1:" + port,
                    "--tls-cert", "/etc/csi4j/tls/controller.pem", "--tls-key", "/etc/csi4j/tls/controller-key.pem",
                    "--tls-ca", "/etc/csi4j/tls/ca.pem");
            containers.add("csi4j-controller");
            long controllerMs = podman.startAndAwait("csi4j-controller", controllerData.resolve("csi.sock"));
            String user = podman.run("exec", "csi4j-controller", "cat", "/proc/1/status");
            assertTrue(user.contains("Uid:\t65532\t65532\t65532\t65532"), user);
            assertTrue(user.contains("CapEff:\t0000000000000000"), user);
            // the links between the roles run on the image's BoringSSL (its library on java.library.path)
            for (String role : List.of("csi4j-agent", "csi4j-controller")) {
                String logs = podman.logs(role);
                assertTrue(logs.contains(" tls=OpenSSL"), role + ":\n" + logs);
            }

            Thread.sleep(5000);  // idle: start-up work done, C heap trimmed (the launcher trims every 2 s)
            measure.append(String.format(Locale.ROOT, "role        start-up (container start to Probe answered)  idle RSS%n"));
            measure.append(String.format(Locale.ROOT, "node agent  %5d ms%40s%n", agentMs, mib(podman.rssKib("csi4j-agent"))));
            measure.append(String.format(Locale.ROOT, "controller  %5d ms%40s%n", controllerMs, mib(podman.rssKib("csi4j-controller"))));
            measure.append(String.format(Locale.ROOT, "(podman's own part of a container start, `podman run --rm --entrypoint /bin/true`: %d ms)%n", runtimeOverhead));

            Path report = base.resolve("sanity.xml");
            var out = new ByteArrayOutputStream();
            var ps = new PrintStream(out, true, StandardCharsets.UTF_8);
            int rc = Main.run(ps, ps, "sanity", "--endpoint", "unix://" + controllerData.resolve("csi.sock"),
                    "--node-endpoint", "unix://" + agentData.resolve("csi.sock"),
                    "--staging-dir", Files.createDirectories(base.resolve("staging")).toString(),
                    "--target-dir", Files.createDirectories(base.resolve("target")).toString(),
                    "--volume-size", "512Mi", "--junit", report.toString(),
                    // xfs (512 MiB volumes: the smallest xfs csi4j makes is 300 MiB): growing a mounted ext4 needs CAP_SYS_RESOURCE, which no process on this machine kind has
                    // (not even root outside a container; the driver then answers FAILED_PRECONDITION, tested in
                    // driver's NodeSocketTest); a Kubernetes node's privileged container has it
                    // (read-only publishes included: the agent sets read-only before the bind is attached, so the
                    // host's copy that propagation makes is read-only too; os/MountsTest shows the old way was not)
                    "--fs-type", "xfs");
            String suite = out.toString(StandardCharsets.UTF_8);
            assertEquals(0, rc, "conformance suite against the containers:\n" + suite
                    + "\nagent:\n" + podman.logs("csi4j-agent") + "\ncontroller:\n" + podman.logs("csi4j-controller"));
            Files.createDirectories(ROOT.resolve("target/image"));
            Files.writeString(ROOT.resolve("target/image/measurements.txt"), measure);
            System.out.print(measure);

            for (String c : containers.reversed()) podman.run("stop", "-t", "30", c);
            for (String c : containers) {
                String code = podman.run("inspect", "--format", "{{.State.ExitCode}}", c).strip();
                assertEquals("0", code, c + " stops with 0 on SIGTERM:\n" + podman.logs(c));
            }
        } finally {
            for (String c : containers.reversed()) podman.quietly("rm", "-f", "-t", "5", c);
            podman.quietly("system", "reset", "--force");
            run(List.of("umount", "-R", "-l", base.toString()));
        }
    }

    /** CSI4J_IMAGE_TAR, or the tarball scripts/image builds from the jars this build packaged. */
    private static Path imageTar() throws Exception {
        String given = System.getenv("CSI4J_IMAGE_TAR");
        if (given != null && !given.isBlank()) return Path.of(given);
        Path tar = ROOT.resolve("target/image/csi4j-docker.tar");
        var pb = new ProcessBuilder(ROOT.resolve("scripts/image").toString(), "--no-build").redirectErrorStream(true);
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(20, TimeUnit.MINUTES), "scripts/image took over 20 minutes");
        assertEquals(0, p.exitValue(), "scripts/image --no-build:\n" + out);
        return tar;
    }

    private static int quiet(String... args) {
        var sink = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        return Main.run(sink, sink, args);
    }

    private static String mib(long kib) {
        return String.format(Locale.ROOT, "%.1f MiB", kib / 1024.0);
    }

    static boolean onPath(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            if (Files.isExecutable(Path.of(dir, tool))) return true;
        }
        return Files.isExecutable(Path.of("/usr/sbin", tool)) || Files.isExecutable(Path.of("/usr/bin", tool));
    }

    static String run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(10, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IOException(command + " did not finish");
        }
        if (p.exitValue() != 0) throw new IOException(command + " exited " + p.exitValue() + ":\n" + out);
        return out;
    }

    private static Path findRoot() {
        String given = System.getenv("CSI4J_REPO_ROOT");
        if (given != null && Files.isExecutable(Path.of(given, "scripts/image"))) return Path.of(given);
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isExecutable(dir.resolve("scripts/image"))) dir = dir.getParent();
        if (dir == null) throw new IllegalStateException("no scripts/image above " + Path.of("").toAbsolutePath());
        return dir;
    }

    /**
     * podman as this machine kind needs it (/work/shared facts, deploy/podman/containers.conf): no ulimit change,
     * runc with cgroupfs; a private store under the test's directory.
     */
    static final class Podman {
        private final Path home;

        Podman(Path home) throws IOException {
            this.home = Files.createDirectories(home);
        }

        List<String> command(String... args) {
            List<String> c = new ArrayList<>(List.of("podman", "--runtime", "runc", "--cgroup-manager=cgroupfs",
                    "--root", home.resolve("root").toString(), "--runroot", home.resolve("run").toString(),
                    "--tmpdir", home.resolve("tmp").toString(), "--events-backend", "none"));
            c.addAll(List.of(args));
            return c;
        }

        String run(String... args) throws IOException, InterruptedException {
            var pb = new ProcessBuilder(command(args)).redirectErrorStream(true);
            pb.environment().put("CONTAINERS_CONF", ROOT.resolve("deploy/podman/containers.conf").toString());
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(10, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new IOException("podman " + List.of(args) + " did not finish");
            }
            if (p.exitValue() != 0) throw new IOException("podman " + List.of(args) + " exited " + p.exitValue() + ":\n" + out);
            return out;
        }

        void quietly(String... args) {
            try {
                run(args);
            } catch (Exception ignored) {
                // cleaning up
            }
        }

        String logs(String container) {
            try {
                return run("logs", container);
            } catch (Exception e) {
                return "(no logs: " + e.getMessage() + ")";
            }
        }

        /** Starts a created container and times it until its socket answers Probe (ready) and GetPluginInfo. */
        long startAndAwait(String container, Path socket) throws Exception {
            long t0 = System.nanoTime();
            run("start", container);
            long deadline = t0 + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                if (Files.exists(socket)) {
                    var channel = Channels.connect(Endpoint.parse("unix://" + socket));
                    try {
                        var identity = IdentityGrpc.newBlockingStub(channel).withDeadlineAfter(2, TimeUnit.SECONDS);
                        identity.probe(ProbeRequest.getDefaultInstance());
                        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                        assertEquals("local.csi4j.io", identity.getPluginInfo(GetPluginInfoRequest.getDefaultInstance()).getName());
                        return ms;
                    } catch (io.grpc.StatusRuntimeException e) {
                        // not serving yet
                    } finally {
                        channel.shutdownNow();
                    }
                }
                if (System.nanoTime() > deadline) fail(container + " never answered on " + socket + ":\n" + logs(container));
                Thread.sleep(10);
            }
        }

        /** The container's main process's resident set, read on the host. */
        long rssKib(String container) throws Exception {
            String pid = run("inspect", "--format", "{{.State.Pid}}", container).strip();
            for (String line : Files.readAllLines(Path.of("/proc", pid, "status"))) {
                if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
            throw new IllegalStateException("no VmRSS for " + container);
        }

        /** podman's share of a start: a container of this image running /bin/true, median of 3. */
        long startupOverheadMillis(String image) throws Exception {
            long[] ms = new long[3];
            for (int i = 0; i < ms.length; i++) {
                long t0 = System.nanoTime();
                run("run", "--rm", "--network", "host", "--entrypoint", "/bin/true", image);
                ms[i] = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            }
            java.util.Arrays.sort(ms);
            return ms[1];
        }
    }
}
