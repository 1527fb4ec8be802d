package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterRoutingTest.createOn;
import static io.csi4j.cli.cluster.ClusterRoutingTest.fails;
import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.cluster.AgentStatus;
import io.csi4j.proto.csi.*;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 28, "a hung agent is not a slow cluster": with one of three agent processes stopped (SIGSTOP: its port still
 * accepts, nothing answers), a call that needs it fails UNAVAILABLE naming the node after the controller's bounded wait
 * (5 s of silence, docs/cluster.md "Waits"), not at the client's 60 s deadline; calls for the other nodes go on; once it
 * is continued everything works again. Status and metrics say how long it has been silent.
 */
class ClusterSilentAgentTest {
    private static final List<String> NODES = List.of("node-a", "node-b", "node-c");
    /** Far above the 5 s bound (CI runs loaded), far below the client's 60 s deadline. */
    private static final long WITHIN_SECONDS = 20;

    @Test
    void aStoppedAgentFailsCallsUnavailableNamingItWithinTheBound(@TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        String metrics = "127.0.0.1:" + ProcessCluster.freePort();
        try (var cluster = ProcessCluster.start(tmp, NODES, List.of(), List.of("--metrics-address", metrics))) {
            var csi = ControllerGrpc.newBlockingStub(cluster.controllerChannel());
            Volume onA = createOn(csi, "on-a", "node-a");
            Volume onB = createOn(csi, "on-b", "node-b");
            var b = cluster.agent("node-b");
            b.child.signal("STOP");
            try {
                // the merged listing: the client's own deadline is 60 s, the controller answers long before it
                long t0 = System.nanoTime();
                var list = fails(Status.Code.UNAVAILABLE, () -> csi.withDeadlineAfter(60, TimeUnit.SECONDS)
                        .listVolumes(ListVolumesRequest.getDefaultInstance()));
                double listSeconds = (System.nanoTime() - t0) / 1e9;
                System.out.printf("stopped agent: merged ListVolumes failed UNAVAILABLE after %.1f s: %s%n", listSeconds,
                        list.getStatus().getDescription());
                assertTrue(list.getStatus().getDescription().contains("node 'node-b'"), list.getStatus().getDescription());
                assertTrue(list.getStatus().getDescription().contains("has not answered for"), list.getStatus().getDescription());
                assertTrue(listSeconds < WITHIN_SECONDS, "the listing waited " + listSeconds + " s");

                // a call forwarded to it, likewise
                t0 = System.nanoTime();
                var get = fails(Status.Code.UNAVAILABLE, () -> csi.withDeadlineAfter(60, TimeUnit.SECONDS)
                        .controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(onB.getVolumeId()).build()));
                double getSeconds = (System.nanoTime() - t0) / 1e9;
                System.out.printf("stopped agent: ControllerGetVolume failed UNAVAILABLE after %.1f s%n", getSeconds);
                assertTrue(get.getStatus().getDescription().contains("node 'node-b'"), get.getStatus().getDescription());
                assertTrue(getSeconds < WITHIN_SECONDS, "the forwarded call waited " + getSeconds + " s");

                // calls routed to live agents still work
                assertEquals(onA.getVolumeId(), csi.withDeadlineAfter(10, TimeUnit.SECONDS).controllerGetVolume(
                        ControllerGetVolumeRequest.newBuilder().setVolumeId(onA.getVolumeId()).build()).getVolume().getVolumeId());
                assertTrue(createOn(csi.withDeadlineAfter(10, TimeUnit.SECONDS), "on-c", "node-c").getVolumeId().endsWith("-node-c"));

                // status and metrics: node-b silent for longer than the bound, the others not
                var status = ClusterStatusTest.byAddress(ClusterStatusTest.status(cluster));
                AgentStatus silent = status.get(b.address());
                assertEquals(AgentStatus.State.SILENT, silent.getState(), silent.toString());
                assertTrue(silent.getSilentForMillis() >= 5_000, silent.toString());
                AgentStatus live = status.get(cluster.agent("node-a").address());
                assertEquals(AgentStatus.State.SERVING, live.getState(), live.toString());
                assertTrue(live.getSilentForMillis() < silent.getSilentForMillis(), live + " vs " + silent);
                String page = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://" + metrics + "/metrics"))
                        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
                var matcher = Pattern.compile("(?m)^csi4j_agent_silent_seconds\\{node=\"node-b\"} ([0-9.]+)$").matcher(page);
                assertTrue(matcher.find(), page);
                assertTrue(Double.parseDouble(matcher.group(1)) >= 5, matcher.group());
                assertTrue(page.contains("csi4j_agent_silent_seconds{node=\"node-a\"}"), page);
            } finally {
                b.child.signal("CONT");
            }

            // continued: everything works again (the CO retries; a few seconds until its heartbeat answers)
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true) {
                try {
                    var all = csi.withDeadlineAfter(10, TimeUnit.SECONDS).listVolumes(ListVolumesRequest.getDefaultInstance());
                    assertEquals(3, all.getEntriesCount(), all.toString());
                    break;
                } catch (StatusRuntimeException e) {
                    assertTrue(System.nanoTime() < deadline, "still failing 30 s after SIGCONT: " + e.getStatus());
                    Thread.sleep(250);
                }
            }
            assertEquals(onB.getVolumeId(), csi.withDeadlineAfter(10, TimeUnit.SECONDS).controllerGetVolume(
                    ControllerGetVolumeRequest.newBuilder().setVolumeId(onB.getVolumeId()).build()).getVolume().getVolumeId());
            assertTrue(createOn(csi.withDeadlineAfter(10, TimeUnit.SECONDS), "on-b-again", "node-b").getVolumeId().endsWith("-node-b"));
            var status = ClusterStatusTest.byAddress(ClusterStatusTest.status(cluster));
            assertEquals(AgentStatus.State.SERVING, status.get(b.address()).getState(), status.get(b.address()).toString());
            assertTrue(status.get(b.address()).getSilentForMillis() < 5_000, status.get(b.address()).toString());
        }
    }
}
