package io.csi4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.addons.identity.Capability;
import io.csi4j.proto.addons.identity.GetCapabilitiesRequest;
import io.csi4j.proto.addons.identity.GetIdentityRequest;
import io.csi4j.proto.addons.identity.IdentityGrpc;
import io.csi4j.proto.addons.identity.ProbeRequest;
import io.csi4j.proto.addons.volumegroup.ControllerGrpc;
import io.csi4j.proto.addons.volumegroup.CreateVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.ListVolumeGroupsRequest;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code csi4j serve} as a real process serves CSI-Addons identity and volumegroup on a second socket: by
 * default {@code <data-dir>/csi-addons.sock}, or where {@code --csi-addons-endpoint} says; SIGTERM removes both.
 */
class ServeAddonsEndpointTest {
    @TempDir Path dir;

    @Test
    @Timeout(120)
    void servesTheAddonsSocketNextToTheCsiSocket() throws Exception {
        Path data = dir.resolve("data");
        try (Served served = Served.start(dir, "serve", "--data-dir", data.toString(), "--engine", "dir", "--pool-size", "0", "--node-id", "n1",
                "--volume-group-delete", "retain-volumes")) {
            Path socket = data.resolve("csi-addons.sock");
            assertTrue(served.lines().stream().anyMatch(l -> l.contains("unix://" + socket)), served.lines().toString());
            var channel = Channels.connect(Endpoint.parse("unix://" + socket));
            try {
                var identity = IdentityGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
                assertEquals("local.csi4j.io", identity.getIdentity(GetIdentityRequest.getDefaultInstance()).getName());
                assertTrue(identity.probe(ProbeRequest.getDefaultInstance()).getReady().getValue());
                assertTrue(identity.getCapabilities(GetCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList().stream()
                        .anyMatch(c -> c.getVolumeGroup().getType() == Capability.VolumeGroup.Type.DO_NOT_ALLOW_VG_TO_DELETE_VOLUMES));
                var groups = ControllerGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
                String id = groups.createVolumeGroup(CreateVolumeGroupRequest.newBuilder().setName("g").build())
                        .getVolumeGroup().getVolumeGroupId();
                assertEquals(id, groups.listVolumeGroups(ListVolumeGroupsRequest.getDefaultInstance())
                        .getEntries(0).getVolumeGroup().getVolumeGroupId());
            } finally {
                channel.shutdownNow();
            }
            assertEquals(0, served.stop());
            assertFalse(Files.exists(socket), "addons socket left behind");
            assertFalse(Files.exists(data.resolve("csi.sock")), "CSI socket left behind");
        }
    }

    @Test
    @Timeout(120)
    void theFlagMovesTheAddonsSocketAndNoneTurnsItOff() throws Exception {
        Path data = dir.resolve("data");
        Path elsewhere = dir.resolve("addons.sock");
        try (Served served = Served.start(dir, "serve", "--data-dir", data.toString(), "--engine", "dir", "--pool-size", "0", "--node-id", "n1",
                "--csi-addons-endpoint", "unix://" + elsewhere)) {
            var channel = Channels.connect(Endpoint.parse("unix://" + elsewhere));
            try {
                var caps = IdentityGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                        .getCapabilities(GetCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList();
                assertTrue(caps.stream().anyMatch(c -> c.getVolumeGroup().getType() == Capability.VolumeGroup.Type.VOLUME_GROUP));
                assertTrue(caps.stream().noneMatch(c -> c.getVolumeGroup().getType()
                        == Capability.VolumeGroup.Type.DO_NOT_ALLOW_VG_TO_DELETE_VOLUMES));
            } finally {
                channel.shutdownNow();
            }
            assertFalse(Files.exists(data.resolve("csi-addons.sock")));
            assertEquals(0, served.stop());
        }
        try (Served served = Served.start(dir, "serve", "--data-dir", data.toString(), "--engine", "dir", "--pool-size", "0", "--node-id", "n1",
                "--csi-addons-endpoint", "none")) {
            assertTrue(Files.exists(data.resolve("csi.sock")));
            assertFalse(Files.exists(data.resolve("csi-addons.sock")));
            assertEquals(0, served.stop());
        }
    }

    /** {@code csi4j} in a child JVM, started and read until it prints its serving line. */
    record Served(Process process, List<String> lines) implements AutoCloseable {
        static Served start(Path dir, String... args) throws Exception {
            String java = ProcessHandle.current().info().command().orElseThrow();
            List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                    "-cp", System.getProperty("java.class.path"), Main.class.getName()));
            command.addAll(List.of(args));
            Path stderr = Files.createTempFile(dir, "serve-", ".stderr");
            Process p = new ProcessBuilder(command).redirectError(stderr.toFile()).start();
            var reader = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            List<String> lines = new ArrayList<>();
            try {
                CompletableFuture.runAsync(() -> {
                    try {
                        for (String line; (line = reader.readLine()) != null; ) {
                            synchronized (lines) { lines.add(line); }
                            if (line.startsWith("csi4j ") && line.contains(" serving ")) return;  // the last start-up line
                        }
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }).get(60, TimeUnit.SECONDS);
            } catch (Exception e) {
                p.destroyForcibly();
                throw new AssertionError("serve did not start: " + lines + "\n" + Files.readString(stderr), e);
            }
            return new Served(p, lines);
        }

        /** SIGTERM, then the exit status. */
        int stop() throws InterruptedException {
            process.destroy();
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), "serve did not stop on SIGTERM");
            return process.exitValue();
        }

        @Override
        public void close() throws InterruptedException {
            if (process.isAlive()) {
                process.destroyForcibly();
                process.waitFor();
            }
        }
    }
}
