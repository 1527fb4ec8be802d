package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterRoutingTest.fails;
import static io.csi4j.cli.cluster.ClusterRoutingTest.on;
import static io.csi4j.cli.cluster.ClusterRoutingTest.volume;
import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.cluster.AgentStatus;
import io.csi4j.proto.csi.*;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The faults of issue 15, each over real {@code csi4j serve} processes (three agents and a controller): an agent
 * SIGKILLed under load, the controller SIGKILLed under load, clients and agents with the wrong certificates, and
 * an agent that stops answering (SIGSTOP) while the others are asked.
 */
class ClusterFaultTest {
    private static final List<String> NODES = List.of("node-a", "node-b", "node-c");
    private static final int PER_WORKER = 150;  // upper bound of creates per worker: the loops are bounded

    /** What a worker creating volumes on one node saw: acknowledged name to volume id, and the errors. */
    record Load(Map<String, String> acked, List<StatusRuntimeException> errors) {
        Load() {
            this(new ConcurrentHashMap<>(), new CopyOnWriteArrayList<>());
        }
    }

    private static CreateVolumeRequest onNode(String name, String node) {
        return volume(name).setAccessibilityRequirements(TopologyRequirement.newBuilder().addRequisite(on(node)).addPreferred(on(node))).build();
    }

    /** Creates volumes {@code prefix-node-i} on {@code node} (null: no topology) until {@code stop} or the bound. */
    private static Load createUntil(ControllerGrpc.ControllerBlockingStub csi, String prefix, String node, AtomicBoolean stop) {
        return createUntil(csi, prefix, node, stop, new Load());
    }

    /** As above, into {@code load}, which the test can watch while it runs. */
    private static Load createUntil(ControllerGrpc.ControllerBlockingStub csi, String prefix, String node, AtomicBoolean stop, Load load) {
        for (int i = 0; i < PER_WORKER && !stop.get(); i++) {
            String name = prefix + "-" + (node == null ? "any" : node) + "-" + i;
            try {
                var v = csi.withDeadlineAfter(30, TimeUnit.SECONDS)
                        .createVolume(node == null ? volume(name).build() : onNode(name, node)).getVolume();
                load.acked().put(name, v.getVolumeId());
            } catch (StatusRuntimeException e) {
                load.errors().add(e);
                try {
                    Thread.sleep(20);
                } catch (InterruptedException interrupted) {
                    return load;
                }
            }
        }
        return load;
    }

    /** Until {@code load} holds an acknowledged create (bounded: 60 s). */
    private static void awaitAcked(Load load) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (load.acked().isEmpty()) {
            assertTrue(System.nanoTime() < deadline, "no create acknowledged in 60 s: " + load.errors());
            Thread.sleep(100);
        }
    }

    @Test
    void anAgentKilledUnderLoadIsNamedOthersServeAndItsVolumesSurviveARestart(@TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        try (var cluster = ProcessCluster.start(tmp, NODES, List.of(), List.of())) {
            var csi = ControllerGrpc.newBlockingStub(cluster.controllerChannel());
            AtomicBoolean stop = new AtomicBoolean();
            Map<String, Future<Load>> loads = new java.util.LinkedHashMap<>();
            try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
                Load onB = new Load();
                for (String node : NODES) {
                    loads.put(node, pool.submit(() -> node.equals("node-b") ? createUntil(csi, "load", node, stop, onB)
                            : createUntil(csi, "load", node, stop)));
                }
                Thread.sleep(1500);
                awaitAcked(onB);  // on a loaded machine the first creates of cold agents take seconds
                cluster.agent("node-b").child.kill();
                long killedAt = System.nanoTime();
                Thread.sleep(1500);
                stop.set(true);
                // while node-b is down: its objects answer UNAVAILABLE naming it, the others are served
                Load b = loads.get("node-b").get();
                assertFalse(b.acked().isEmpty(), "node-b acknowledged creates before the kill");
                String oneOnB = b.acked().values().iterator().next();
                var get = fails(Status.Code.UNAVAILABLE, () -> csi.withDeadlineAfter(30, TimeUnit.SECONDS)
                        .controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(oneOnB).build()));
                assertTrue(get.getStatus().getDescription().contains("node 'node-b'"), get.getStatus().getDescription());
                var create = fails(Status.Code.UNAVAILABLE, () -> csi.withDeadlineAfter(30, TimeUnit.SECONDS)
                        .createVolume(onNode("after-kill-b", "node-b")));
                assertTrue(create.getStatus().getDescription().contains("node-b"), create.getStatus().getDescription());
                assertFalse(b.errors().isEmpty(), "creates on node-b failed after the kill");
                for (var e : b.errors()) {
                    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
                    assertTrue(e.getStatus().getDescription().contains("node-b"), e.getStatus().getDescription());
                }
                for (String node : List.of("node-a", "node-c")) {
                    Load other = loads.get(node).get();
                    assertEquals(List.of(), other.errors().stream().map(StatusRuntimeException::getStatus).toList(), node + " kept serving");
                    assertEquals(node, csi.createVolume(onNode("after-kill-" + node, node)).getVolume()
                            .getAccessibleTopology(0).getSegmentsMap().get("topology.csi4j.io/node"));
                }
                System.out.printf("agent kill: acked a=%d b=%d c=%d, %d ms of load after the kill%n", loads.get("node-a").get().acked().size(),
                        b.acked().size(), loads.get("node-c").get().acked().size(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt));

                // restart with the same data directory and port: every acknowledged volume is there
                cluster.agent("node-b").start();
                cluster.awaitEveryNode();
                for (var load : loads.values()) {
                    for (var acked : load.get().acked().entrySet()) {
                        var v = csi.controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(acked.getValue()).build());
                        assertEquals(acked.getValue(), v.getVolume().getVolumeId());
                    }
                }
                Set<String> listed = listAll(csi);
                for (var load : loads.values()) assertTrue(listed.containsAll(load.get().acked().values()));
            }
        }
    }

    @Test
    void aControllerKilledUnderLoadIsReplacedAtOnceAndRetriesAreIdempotent(@TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        try (var cluster = ProcessCluster.start(tmp, NODES, List.of(), List.of())) {
            ManagedChannel channel = cluster.controllerChannel();
            var csi = ControllerGrpc.newBlockingStub(channel);
            AtomicBoolean stop = new AtomicBoolean();
            List<String> workers = new ArrayList<>(NODES);
            workers.add(null);  // and one without topology: placed by capacity, found again by FindVolume
            List<Future<Load>> loads = new ArrayList<>();
            try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
                List<Load> running = new ArrayList<>();
                for (String node : workers) {
                    Load load = new Load();
                    running.add(load);
                    loads.add(pool.submit(() -> createUntil(csi, "c", node, stop, load)));
                }
                Thread.sleep(1500);
                for (Load load : running) awaitAcked(load);  // the kill must find acknowledged creates to retry
                cluster.controller.kill();
                Thread.sleep(500);
                stop.set(true);
            }
            long restart = System.nanoTime();
            cluster.restartController();
            // the first call after the start-up line is served: nothing to recover (a new connection, as a restarted
            // sidecar's; the old channel would first sit out gRPC's reconnect backoff)
            var again = ControllerGrpc.newBlockingStub(cluster.controllerChannel());
            again.withDeadlineAfter(10, TimeUnit.SECONDS).listVolumes(ListVolumesRequest.getDefaultInstance());
            System.out.printf("controller restart: first list answered %d ms after the restart began%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restart));
            int acked = 0;
            int retried = 0;
            for (int w = 0; w < workers.size(); w++) {
                String node = workers.get(w);
                Load load = loads.get(w).get();
                acked += load.acked().size();
                // the client retries every name it tried: acknowledged ones answer the same volume
                int last = load.acked().size() + load.errors().size();
                for (int i = 0; i < last; i++) {
                    String name = "c-" + (node == null ? "any" : node) + "-" + i;
                    var v = again.withDeadlineAfter(30, TimeUnit.SECONDS).createVolume(node == null ? volume(name).build() : onNode(name, node)).getVolume();
                    retried++;
                    String before = load.acked().get(name);
                    if (before != null) assertEquals(before, v.getVolumeId(), "retry of " + name);
                }
            }
            assertTrue(acked > 0);
            // one volume per name, none twice
            List<String> listed = listAllIds(again);
            assertEquals(retried, listed.size(), "one volume per name");
            assertEquals(listed.size(), Set.copyOf(listed).size());
            System.out.printf("controller kill: %d acknowledged, %d names retried idempotently%n", acked, retried);
        }
    }

    @Test
    void wrongCertificatesAreRefusedAtTheHandshake(@TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        var rogue = TestCertificates.authority(tmp.resolve("rogue"), "rogue");
        var rogueAgentTls = rogue.issue("rogue-agent");
        try (var cluster = new ProcessCluster(tmp)) {
            var a = cluster.addAgent("node-a", "node-a", List.of()).start();
            // an agent whose certificate another CA signed (it also trusts only that CA)
            var stranger = cluster.addAgent("node-x", "node-x", List.of(), rogueAgentTls).start();
            cluster.startController(List.of());

            // a client with no certificate, and one with a certificate of another CA: refused by the agent endpoint
            var noCert = TlsChannelCredentials.newBuilder().trustManager(cluster.ca.caFile.toFile()).build();
            var mixed = new io.csi4j.sdk.server.MutualTls(rogueAgentTls.certificate(), rogueAgentTls.privateKey(), cluster.ca.caFile);
            List<ManagedChannel> channels = List.of(
                    NettyChannelBuilder.forAddress("127.0.0.1", a.port, noCert).overrideAuthority("127.0.0.1").build(),
                    Channels.builder(new Endpoint.Tcp("127.0.0.1", a.port), mixed, "127.0.0.1").build());
            try {
                for (ManagedChannel c : channels) {
                    var e = fails(Status.Code.UNAVAILABLE, () -> IdentityGrpc.newBlockingStub(c).withDeadlineAfter(20, TimeUnit.SECONDS)
                            .getPluginInfo(GetPluginInfoRequest.getDefaultInstance()));
                    Throwable root = e;
                    while (root.getCause() != null) root = root.getCause();
                    // the JDK's engine says SSLHandshakeException; OpenSSL's names the peer's alert
                    // (TLSV1_ALERT_CERTIFICATE_REQUIRED, ..._UNKNOWN_CA): either way a TLS refusal of the certificate
                    assertInstanceOf(javax.net.ssl.SSLException.class, root, "refused at the handshake");
                    assertTrue(root instanceof javax.net.ssl.SSLHandshakeException
                            || String.valueOf(root.getMessage()).matches("(?s).*ALERT_(CERTIFICATE_REQUIRED|UNKNOWN_CA|BAD_CERTIFICATE).*"),
                            "refused at the handshake: " + root);
                    System.out.println("refused client: " + root.getMessage());
                    // nor can it reach a Controller call
                    fails(Status.Code.UNAVAILABLE, () -> ControllerGrpc.newBlockingStub(c).withDeadlineAfter(20, TimeUnit.SECONDS)
                            .listVolumes(ListVolumesRequest.getDefaultInstance()));
                }
            } finally {
                channels.forEach(ManagedChannel::shutdownNow);
            }

            // the controller refuses the agent of another CA: never identified, silent in status, lists fail naming it
            var csi = ControllerGrpc.newBlockingStub(cluster.controllerChannel());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            Map<String, AgentStatus> s;
            while (true) {
                s = ClusterStatusTest.byAddress(ClusterStatusTest.status(cluster));
                if (s.get(a.address()).getState() == AgentStatus.State.SERVING) break;
                assertTrue(System.nanoTime() < deadline, s.toString());
                Thread.sleep(200);
            }
            AgentStatus x = s.get(stranger.address());
            assertEquals(AgentStatus.State.SILENT, x.getState(), x.toString());
            assertEquals("", x.getNodeId());
            assertEquals(0, x.getLastAnswerUnixMillis());
            var list = fails(Status.Code.UNAVAILABLE, () -> csi.listVolumes(ListVolumesRequest.getDefaultInstance()));
            assertTrue(list.getStatus().getDescription().contains(stranger.address()), list.getStatus().getDescription());
            // calls for node-a still work
            assertTrue(csi.createVolume(onNode("only-on-a", "node-a")).getVolume().getVolumeId().endsWith("-node-a"));
        }
    }

    @Test
    void aStoppedAgentDoesNotStallCallsForOtherNodes(@TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        try (var cluster = ProcessCluster.start(tmp, NODES, List.of(), List.of())) {
            var csi = ControllerGrpc.newBlockingStub(cluster.controllerChannel());
            var onB = csi.createVolume(onNode("on-b", "node-b")).getVolume();
            var b = cluster.agent("node-b");
            b.child.signal("STOP");  // its port still accepts, nothing answers
            try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
                // 32 calls for node-b hang on it (each with a 6 s deadline) ...
                List<Future<Status.Code>> stuck = new ArrayList<>();
                for (int i = 0; i < 32; i++) {
                    stuck.add(pool.submit(() -> {
                        try {
                            csi.withDeadlineAfter(6, TimeUnit.SECONDS).controllerGetVolume(ControllerGetVolumeRequest.newBuilder()
                                    .setVolumeId(onB.getVolumeId()).build());
                            return Status.Code.OK;
                        } catch (StatusRuntimeException e) {
                            return e.getStatus().getCode();
                        }
                    }));
                }
                Thread.sleep(300);
                // ... while calls for node-a and node-c are answered at once
                long worst = 0;
                for (int i = 0; i < 20; i++) {
                    String node = i % 2 == 0 ? "node-a" : "node-c";
                    long t0 = System.nanoTime();
                    csi.withDeadlineAfter(5, TimeUnit.SECONDS).createVolume(onNode("while-b-stopped-" + i, node));
                    worst = Math.max(worst, System.nanoTime() - t0);
                }
                System.out.printf("stopped agent: worst create on another node %.1f ms%n", worst / 1e6);
                assertTrue(worst < TimeUnit.SECONDS.toNanos(2), "calls for other nodes stalled: " + worst / 1e6 + " ms");
                // status answers within its per-agent deadline, naming node-b as silent
                long t0 = System.nanoTime();
                var s = ClusterStatusTest.byAddress(ClusterStatusTest.status(cluster));
                assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(8), "status took " + (System.nanoTime() - t0) / 1e6 + " ms");
                assertEquals(AgentStatus.State.SILENT, s.get(b.address()).getState(), s.get(b.address()).toString());
                assertEquals(AgentStatus.State.SERVING, s.get(cluster.agent("node-a").address()).getState());
                for (var f : stuck) {
                    Status.Code code = f.get();
                    assertTrue(code == Status.Code.DEADLINE_EXCEEDED || code == Status.Code.UNAVAILABLE, code.toString());
                }
            } finally {
                b.child.signal("CONT");
            }
            // it answers again once continued
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true) {
                try {
                    csi.withDeadlineAfter(5, TimeUnit.SECONDS).controllerGetVolume(ControllerGetVolumeRequest.newBuilder()
                            .setVolumeId(onB.getVolumeId()).build());
                    break;
                } catch (StatusRuntimeException e) {
                    assertTrue(System.nanoTime() < deadline, e.getStatus().toString());
                    Thread.sleep(200);
                }
            }
        }
    }

    static Set<String> listAll(ControllerGrpc.ControllerBlockingStub csi) {
        return Set.copyOf(listAllIds(csi));
    }

    /** Every volume id through merged pages of 100 (bounded). */
    static List<String> listAllIds(ControllerGrpc.ControllerBlockingStub csi) {
        List<String> ids = new ArrayList<>();
        String token = "";
        for (int page = 0; page < 1000; page++) {
            var r = csi.withDeadlineAfter(30, TimeUnit.SECONDS).listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(100).setStartingToken(token).build());
            r.getEntriesList().forEach(e -> ids.add(e.getVolume().getVolumeId()));
            token = r.getNextToken();
            if (token.isEmpty()) return ids;
        }
        throw new AssertionError("more than 1000 pages");
    }
}
