package io.csi4j.sdk.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.CreateVolumeResponse;
import io.csi4j.proto.csi.GetPluginInfoRequest;
import io.csi4j.proto.csi.IdentityGrpc;
import io.csi4j.sdk.example.ExamplePluginMain;
import io.csi4j.sdk.testing.Requests;
import io.grpc.ManagedChannel;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The example plugin in its own JVM, stopped by a real SIGTERM while a call is in flight. */
class SignalShutdownTest {
    @TempDir
    Path dir;

    static Process launch(Path dir, List<String> args, List<String> jvmFlags) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElseThrow());
        command.add("--enable-native-access=ALL-UNNAMED");
        command.addAll(jvmFlags);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(ExamplePluginMain.class.getName());
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("plugin.log").toFile());
        builder.environment().put("CSI_ENDPOINT", "unix://" + dir.resolve("csi.sock"));
        return builder.start();
    }

    @Test
    void sigtermDrainsTheCallInFlightRemovesTheSocketAndExitsZero() throws Exception {
        Process plugin = launch(dir, List.of("--metrics-address", "127.0.0.1:0", "--grace-ms", "20000"), List.of());
        ManagedChannel channel = null;
        try {
            Path socket = dir.resolve("csi.sock");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!Files.exists(socket)) {
                assertTrue(plugin.isAlive(), () -> "plugin died: " + log());
                assertTrue(System.nanoTime() < deadline, "no socket after 30 s");
                Thread.sleep(20);
            }
            channel = Channels.connect(new Endpoint.Unix(socket));
            IdentityGrpc.newBlockingStub(channel).getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
            ManagedChannel c = channel;
            CompletableFuture<CreateVolumeResponse> slow = Requests.async(() ->
                    ControllerGrpc.newBlockingStub(c).createVolume(Requests.create("drained", "slow_ms", "2000")));
            waitForInFlight();

            plugin.destroy(); // SIGTERM
            CreateVolumeResponse response = slow.get(30, TimeUnit.SECONDS);
            assertTrue(response.getVolume().getVolumeId().startsWith("vol-"), response.toString());
            assertTrue(plugin.waitFor(30, TimeUnit.SECONDS), "plugin did not exit");
            assertEquals(0, plugin.exitValue(), this::log);
            assertFalse(Files.exists(socket), "socket removed");
            assertTrue(log().contains("SIGTERM"), log());
            assertTrue(log().contains("csi.v1.Controller/CreateVolume OK"), log());
        } finally {
            if (channel != null) channel.shutdownNow();
            plugin.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Reads the metrics endpoint until CreateVolume is in flight, so the signal surely arrives mid-call. */
    private void waitForInFlight() throws Exception {
        String port = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        HttpClient http = HttpClient.newHttpClient();
        while (System.nanoTime() < deadline) {
            if (port == null) {
                var m = java.util.regex.Pattern.compile("metrics on http://127\\.0\\.0\\.1:(\\d+)/metrics").matcher(log());
                if (m.find()) port = m.group(1);
            } else {
                String text = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                        HttpResponse.BodyHandlers.ofString()).body();
                if (text.contains("grpc_server_in_flight{grpc_service=\"csi.v1.Controller\",grpc_method=\"CreateVolume\"} 1")) return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("CreateVolume never showed as in flight: " + log());
    }

    private String log() {
        try {
            return Files.readString(dir.resolve("plugin.log"));
        } catch (java.io.IOException e) {
            return "(no log: " + e + ")";
        }
    }
}
