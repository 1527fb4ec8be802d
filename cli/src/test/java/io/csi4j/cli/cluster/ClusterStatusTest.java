package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterRoutingTest.createOn;
import static org.junit.jupiter.api.Assertions.*;

import com.google.protobuf.util.JsonFormat;
import io.csi4j.cli.Main;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.cluster.AgentStatus;
import io.csi4j.proto.cluster.GetClusterStatusResponse;
import io.csi4j.proto.csi.ControllerGetVolumeRequest;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.ListVolumesRequest;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --nodes} discovery and {@code csi4j cluster status} over real processes: two agents and, started later,
 * a third that claims node-a's id. The first node-a keeps its node (the later one is refused, logged, shown in
 * status with the reason) and calls for node-a's volumes still go to it; once the first dies, the one that answers
 * takes the node over.
 */
class ClusterStatusTest {

    record Run(int exit, String out, String err) {}

    static Run cli(String... args) {
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        int exit = Main.run(new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), args);
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    static GetClusterStatusResponse status(ProcessCluster cluster) throws Exception {
        Run run = cli("cluster", "status", "--endpoint", cluster.controllerSocket(), "-o", "json");
        var builder = GetClusterStatusResponse.newBuilder();
        JsonFormat.parser().merge(run.out(), builder);
        return builder.build();
    }

    static Map<String, AgentStatus> byAddress(GetClusterStatusResponse r) {
        return r.getAgentsList().stream().collect(Collectors.toMap(AgentStatus::getAddress, Function.identity()));
    }

    @Test
    void aSecondAgentClaimingALiveNodeIsRefusedAndShown(@TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        try (var cluster = new ProcessCluster(tmp)) {
            var a = cluster.addAgent("node-a", "node-a", List.of()).start();
            var b = cluster.addAgent("node-b", "node-b", List.of()).start();
            var impostor = cluster.addAgent("node-a-again", "node-a", List.of());  // same --node-id, own data dir and port
            cluster.startController(List.of());
            var csi = ControllerGrpc.newBlockingStub(cluster.controllerChannel()).withDeadlineAfter(60, TimeUnit.SECONDS);
            // a and b answer; the third address is silent (not started): status says so
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            GetClusterStatusResponse before;
            while (true) {
                before = status(cluster);
                var s = byAddress(before);
                if (s.get(a.address()).getState() == AgentStatus.State.SERVING && s.get(b.address()).getState() == AgentStatus.State.SERVING) break;
                assertTrue(System.nanoTime() < deadline, "a and b never served: " + before);
                Thread.sleep(200);
            }
            assertEquals(List.of(a.address(), b.address(), impostor.address()), before.getDiscoveryList());
            assertEquals(AgentStatus.State.SILENT, byAddress(before).get(impostor.address()).getState());
            assertEquals(0, byAddress(before).get(impostor.address()).getLastAnswerUnixMillis());
            var onA = createOn(csi, "owned-by-the-first", "node-a");

            impostor.start();
            GetClusterStatusResponse after;
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                after = status(cluster);
                if (byAddress(after).get(impostor.address()).getState() == AgentStatus.State.REFUSED) break;
                assertTrue(System.nanoTime() < deadline, "the second node-a was never refused: " + after);
                Thread.sleep(300);
            }
            var s = byAddress(after);
            AgentStatus first = s.get(a.address());
            AgentStatus second = s.get(impostor.address());
            assertEquals(AgentStatus.State.SERVING, first.getState());
            assertEquals("node-a", first.getNodeId());
            assertFalse(first.getVersion().isEmpty());
            assertTrue(first.getHasAvailableCapacity() && first.getAvailableCapacity() > 0, first.toString());
            assertTrue(first.getLastAnswerUnixMillis() > System.currentTimeMillis() - 60_000, first.toString());
            assertEquals("node-a", second.getNodeId());
            assertTrue(second.getReason().contains("already served by " + a.address()), second.getReason());
            assertTrue(cluster.controller.stderr().contains("refusing " + impostor.address()), cluster.controller.stderr());

            // routing still goes to the first node-a: its volume is found, lists hold it once
            assertEquals(onA.getVolumeId(), csi.controllerGetVolume(ControllerGetVolumeRequest.newBuilder()
                    .setVolumeId(onA.getVolumeId()).build()).getVolume().getVolumeId());
            var again = createOn(csi, "owned-by-the-first", "node-a");
            assertEquals(onA.getVolumeId(), again.getVolumeId(), "the retry went to the node that made it");
            assertEquals(1, csi.listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesList().stream()
                    .filter(e -> e.getVolume().getVolumeId().endsWith("-node-a")).count());

            // the table: one row per agent, and exit 1 because one agent is not serving
            Run table = cli("cluster", "status", "--endpoint", cluster.controllerSocket());
            assertEquals(1, table.exit(), table.out() + table.err());
            assertTrue(table.out().contains("NODE") && table.out().contains("LAST ANSWER"), table.out());
            assertTrue(table.out().lines().anyMatch(l -> l.startsWith("node-a") && l.contains(impostor.address()) && l.contains("refused")), table.out());
            assertTrue(table.out().lines().anyMatch(l -> l.startsWith("node-b") && l.contains("serving")), table.out());

            // the holder dies: its calls fail naming it, and the claimant that answers takes the node over (as a pod
            // that moved would); here it has another data directory, so node-a's old volume is not found there
            a.child.kill();
            var down = ClusterRoutingTest.fails(io.grpc.Status.Code.UNAVAILABLE, () -> csi.controllerGetVolume(
                    ControllerGetVolumeRequest.newBuilder().setVolumeId(onA.getVolumeId()).build()));
            assertTrue(down.getStatus().getDescription().contains("node 'node-a'"), down.getStatus().getDescription());
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                var now = byAddress(status(cluster));
                if (now.get(impostor.address()).getState() == AgentStatus.State.SERVING) {
                    assertEquals(AgentStatus.State.REFUSED, now.get(a.address()).getState(), now.toString());
                    break;
                }
                assertTrue(System.nanoTime() < deadline, "the answering claimant never took node-a over: " + now);
                Thread.sleep(300);
            }
            ClusterRoutingTest.fails(io.grpc.Status.Code.NOT_FOUND, () -> ControllerGrpc.newBlockingStub(cluster.controllerChannel())
                    .controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(onA.getVolumeId()).build()));
        }
    }

    @Test
    void statusOfAHealthyClusterExitsZero(@TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        try (var cluster = ProcessCluster.start(tmp, List.of("node-a", "node-b", "node-c"), List.of(), List.of())) {
            Run table = cli("cluster", "status", "--endpoint", cluster.controllerSocket());
            assertEquals(0, table.exit(), table.out() + table.err());
            assertEquals(6, table.out().lines().count(), table.out());  // nodes line, blank, header, three rows
            var r = status(cluster);
            assertEquals(List.of("node-a", "node-b", "node-c"), r.getAgentsList().stream().map(AgentStatus::getNodeId).toList());
            assertTrue(r.getAgentsList().stream().allMatch(x -> x.getState() == AgentStatus.State.SERVING && x.getHasAvailableCapacity()));
        }
    }
}
