package io.csi4j.cli;

import static org.junit.jupiter.api.Assertions.*;

import com.google.protobuf.util.JsonFormat;
import io.csi4j.cli.testing.Cli;
import io.csi4j.proto.csi.CreateVolumeResponse;
import io.csi4j.proto.csi.GetPluginInfoResponse;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The commands against {@code csi4j serve} running as its own process, as a user runs them: the endpoint from
 * --endpoint in this JVM, and from $CSI_ENDPOINT in a child cli process.
 */
class ServeProcessTest {
    @TempDir
    Path dir;
    Process serve;

    static List<String> java(String... args) {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        var command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-XX:TieredStopAtLevel=1",
                "-cp", classpath, "io.csi4j.cli.Main"));
        command.addAll(List.of(args));
        return command;
    }

    @AfterEach
    void stop() throws Exception {
        if (serve != null && serve.isAlive()) {
            serve.destroyForcibly();
            serve.waitFor(10, TimeUnit.SECONDS);
        }
    }

    record Child(int exit, String out, String err) {}

    static Child run(Map<String, String> env, String... args) throws Exception {
        var pb = new ProcessBuilder(java(args));
        pb.environment().remove("CSI_ENDPOINT");
        pb.environment().putAll(env);
        Process p = pb.start();
        var out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
        var err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "cli process did not finish");
        return new Child(p.exitValue(), out.get(), err.get());
    }

    static String read(java.io.InputStream in) {
        try {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void commandsReachServeByFlagAndByEnvironment() throws Exception {
        Path data = dir.resolve("data");
        var pb = new ProcessBuilder(java("serve", "--data-dir", data.toString(), "--node-id", "proc-node", "--engine", "dir", "--pool-size", "0"));
        pb.redirectError(dir.resolve("serve.err").toFile());
        serve = pb.start();
        var stdout = new BufferedReader(new InputStreamReader(serve.getInputStream(), StandardCharsets.UTF_8));
        String startLine = CompletableFuture.supplyAsync(() -> {
            try {
                return stdout.readLine();
            } catch (java.io.IOException e) {
                return null;
            }
        }).get(60, TimeUnit.SECONDS);
        String endpoint = "unix://" + data.toRealPath().resolve("csi.sock");
        assertNotNull(startLine, () -> "serve printed nothing; stderr: " + readQuietly(dir.resolve("serve.err")));
        assertTrue(startLine.contains("serving local.csi4j.io on " + endpoint), startLine);

        var info = Cli.against(endpoint).json(GetPluginInfoResponse.getDefaultInstance(), "identity", "info");
        assertEquals("proc-node", info.getManifestMap().get("node"));

        Map<String, String> env = Map.of("CSI_ENDPOINT", endpoint);
        Child created = run(env, "controller", "create-volume", "proc-vol", "--required-bytes", "2Mi", "-o", "json");
        assertEquals(0, created.exit(), created::toString);
        var volume = CreateVolumeResponse.newBuilder();
        JsonFormat.parser().merge(created.out(), volume);
        String id = volume.getVolume().getVolumeId();
        assertTrue(id.endsWith("-proc-node"), id);

        Child listed = run(env, "controller", "list-volumes");
        assertEquals(0, listed.exit(), listed::toString);
        assertTrue(listed.out().startsWith("VOLUME ID") && listed.out().contains(id), listed.out());

        Child missing = run(env, "controller", "get-volume", "vol-nothere-proc-node");
        assertEquals(1, missing.exit(), missing::toString);
        assertEquals("", missing.out());
        assertTrue(missing.err().startsWith("NOT_FOUND: "), missing.err());

        // serve's CSI-Addons socket sits beside csi.sock, where vg and addons look when only CSI_ENDPOINT is set
        Child addons = run(env, "addons", "probe");
        assertEquals(0, addons.exit(), addons::toString);
        assertEquals("ready: true\n", addons.out());
        Child group = run(env, "vg", "create", "proc-group", "--volume-id", id, "-o", "json");
        assertEquals(0, group.exit(), group::toString);
        var vg = io.csi4j.proto.addons.volumegroup.CreateVolumeGroupResponse.newBuilder();
        JsonFormat.parser().merge(group.out(), vg);
        String groupId = vg.getVolumeGroup().getVolumeGroupId();
        assertEquals(id, vg.getVolumeGroup().getVolumes(0).getVolumeId());
        assertEquals(0, run(env, "vg", "modify", groupId, "--empty").exit());
        assertEquals(0, run(env, "vg", "delete", groupId).exit());

        Child noEndpoint = run(Map.of(), "identity", "probe");
        assertEquals(1, noEndpoint.exit());
        assertTrue(noEndpoint.err().contains("no endpoint: set CSI_ENDPOINT or pass --endpoint"), noEndpoint.err());

        assertEquals(0, run(env, "controller", "delete-volume", id).exit());
        serve.destroy(); // SIGTERM: serve drains, removes its socket and exits 0
        assertTrue(serve.waitFor(30, TimeUnit.SECONDS), "serve did not stop on SIGTERM");
        assertEquals(0, serve.exitValue(), () -> readQuietly(dir.resolve("serve.err")));
        assertFalse(Files.exists(data.resolve("csi.sock")), "socket left behind");
    }

    private static String readQuietly(Path file) {
        try {
            return Files.readString(file);
        } catch (java.io.IOException e) {
            return "(" + e + ")";
        }
    }
}
