package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.ext4;
import static io.csi4j.cli.cluster.ClusterReplicationTest.replicated;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.ListVolumesRequest;
import io.csi4j.proto.csi.Topology;
import io.csi4j.proto.csi.TopologyRequirement;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Review 2026-11-27 s10, F3, with real processes: three image-engine agents and <b>two</b> controllers on them (the
 * deployment runs two replicas; the external-attacher's and the csi-addons sidecar's leaders may sit in different
 * ones, each serving its own calls), both with {@code --failover-after 8s}. A 3-replica volume's primary agent is
 * SIGKILLed; once it has been silent for the delay, controller 1 is asked ControllerPublishVolume on node-b and
 * controller 2 on node-c at the same moment. Before the fix both chose epoch 2 and both promoted their node: two
 * PRIMARY copies of epoch 2, both writable, neither ever fenced. Now each makes the other secondaries learn the epoch
 * before promoting its own target, so at most one copy is primary at the top epoch, whatever the interleaving.
 * Since a failover refuses a target whose point is older than another answering copy's (issue 28, {@code
 * FailoverTarget}), two deciders reach the reservation with different targets only when the points tie: here both
 * copies' cut times are unknown (their round logs removed while their agents were down, as on an agent older than the
 * round log), so node-b and node-c tie and the race is the one F3 is about; with known cuts node-b, whose round came
 * first, would be refused before any reservation.
 */
class ClusterTwoControllersTest {
    static final int FAILOVER_AFTER_S = 8;
    static final int VOLUMES = 3;
    private static final Pattern EPOCH = Pattern.compile("\"epoch\"\\s*:\\s*\"(\\d+)\"");

    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, FAILOVER_AFTER_S,
            List.of("node-a", "node-b", "node-c")));

    @Test
    void twoControllersFailingOverToDifferentNodesAtOnceNeverMakeTwoPrimariesOfOneEpoch() throws Exception {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < VOLUMES; i++) {
            // the primary on node-a (preferred), a day's interval: only the rounds started here
            var req = replicated("two-ctl-" + i, 3, "24h").setAccessibilityRequirements(TopologyRequirement.newBuilder()
                    .addPreferred(Topology.newBuilder().putSegments("topology.csi4j.io/node", "node-a"))).build();
            String id = fx.csi().createVolume(req).getVolume().getVolumeId();
            assertTrue(id.contains("node-a__"), "primary on node-a: " + id);
            fx.round("node-b", "node-a", id);                 // both secondaries hold a complete point
            fx.round("node-c", "node-a", id);
            ids.add(id);
        }
        // a tie: neither copy says when its point was cut (both rank oldest), so both targets pass FailoverTarget
        for (String node : List.of("node-b", "node-c")) {
            var agent = fx.cluster.agent(node);
            agent.child.kill();
            for (String id : ids) Files.delete(fx.dataDir(node).resolve("replication").resolve(id + ".round"));
            agent.start();
        }
        fx.cluster.awaitEveryNode();
        for (String id : ids) {
            for (String node : List.of("node-b", "node-c")) {
                var r = fx.replica(node, id);
                assertTrue(r.getPointCutUnixNanos() == 0 && !r.hasLastRound() && !r.getPoint().isEmpty(), node + ": " + r);
            }
        }
        var agentA = fx.cluster.agent("node-a");
        var second = secondController();
        try {
            var two = ControllerGrpc.newBlockingStub(second.channel);
            agentA.child.signal("KILL");
            Thread.sleep(TimeUnit.SECONDS.toMillis(FAILOVER_AFTER_S + 2));   // silent past the delay for both controllers
            for (String id : ids) {
                var barrier = new CyclicBarrier(2);
                var one = race(barrier, () -> fx.csi().controllerPublishVolume(publish(id, "node-b")));
                var other = race(barrier, () -> two.withDeadlineAfter(120, TimeUnit.SECONDS).controllerPublishVolume(publish(id, "node-c")));
                one.join(java.time.Duration.ofSeconds(150));
                other.join(java.time.Duration.ofSeconds(150));
                String b = fx.state("node-b", id), c = fx.state("node-c", id);
                long top = Math.max(epoch(b), epoch(c));
                int primariesAtTop = (isPrimary(b) && epoch(b) == top ? 1 : 0) + (isPrimary(c) && epoch(c) == top ? 1 : 0);
                System.out.printf("volume %s: controller 1 -> node-b %s, controller 2 -> node-c %s; node-b %s; node-c %s%n",
                        id, outcome(one), outcome(other), b.strip(), c.strip());
                assertTrue(primariesAtTop <= 1, "two primaries of epoch " + top + ":\nnode-b " + b + "\nnode-c " + c);
                // and never stuck: the CO's retry (to the winner, or to node-b when both were refused) leaves one primary
                String retryOn = isPrimary(c) && epoch(c) == top ? "node-c" : "node-b";
                publishRetried(id, retryOn);
                String b2 = fx.state("node-b", id), c2 = fx.state("node-c", id);
                long top2 = Math.max(epoch(b2), epoch(c2));
                int primaries = (isPrimary(b2) && epoch(b2) == top2 ? 1 : 0) + (isPrimary(c2) && epoch(c2) == top2 ? 1 : 0);
                assertEquals(1, primaries, "after the retry on " + retryOn + ":\nnode-b " + b2 + "\nnode-c " + c2);
                assertTrue(isPrimary(retryOn.equals("node-b") ? b2 : c2), retryOn + " is the primary: " + b2 + " / " + c2);
            }
        } finally {
            second.close();
            if (agentA.child == null || !agentA.child.alive()) {
                agentA.start();
                fx.cluster.awaitEveryNode();
            }
        }
    }

    /** ControllerPublishVolume through controller 1, asked again while UNAVAILABLE or ABORTED, for 60 s at most. */
    private static void publishRetried(String id, String node) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                fx.csi().controllerPublishVolume(publish(id, node));
                return;
            } catch (io.grpc.StatusRuntimeException e) {
                var code = e.getStatus().getCode();
                if ((code != io.grpc.Status.Code.UNAVAILABLE && code != io.grpc.Status.Code.ABORTED) || System.nanoTime() > deadline) throw e;
                Thread.sleep(500);
            }
        }
    }

    private static ControllerPublishVolumeRequest publish(String id, String node) {
        return ControllerPublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(node).setVolumeCapability(ext4()).build();
    }

    private static long epoch(String state) {
        Matcher m = EPOCH.matcher(state);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    private static boolean isPrimary(String state) {
        return state.contains("\"PRIMARY\"");
    }

    /** A call started together with the other one (a barrier), on its own thread; its outcome kept for the log. */
    private static final class Racer extends Thread {
        volatile String outcome = "not run";
        private final CyclicBarrier barrier;
        private final Runnable call;

        Racer(CyclicBarrier barrier, Runnable call) {
            this.barrier = barrier;
            this.call = call;
        }

        @Override
        public void run() {
            try {
                barrier.await(60, TimeUnit.SECONDS);
                call.run();
                outcome = "OK";
            } catch (StatusRuntimeException e) {
                outcome = e.getStatus().getCode().toString();
            } catch (Exception e) {
                outcome = e.toString();
            }
        }
    }

    private static Racer race(CyclicBarrier barrier, Runnable call) {
        var racer = new Racer(barrier, call);
        racer.start();
        return racer;
    }

    private static String outcome(Racer r) {
        return r.outcome;
    }

    /** A second controller process on the same agents, with its own sockets, answering once it knows every node. */
    private record Second(ServeChild child, ManagedChannel channel) implements AutoCloseable {
        @Override
        public void close() throws Exception {
            channel.shutdownNow();
            child.close();
        }
    }

    private static Second secondController() throws Exception {
        Path dir = fx.tmp.resolve("controller-2");
        var cluster = fx.cluster;
        List<String> flags = new ArrayList<>(List.of("--mode", "controller", "--data-dir", dir.toString(),
                "--nodes", String.join(",", List.of("node-a", "node-b", "node-c").stream().map(n -> cluster.agent(n).address()).toList()),
                "--tls-cert", cluster.controllerTls.certificate().toString(), "--tls-key", cluster.controllerTls.privateKey().toString(),
                "--tls-ca", cluster.controllerTls.ca().toString(), "--failover-after", FAILOVER_AFTER_S + "s"));
        var child = ServeChild.start(flags);
        var channel = Channels.connect(Endpoint.parse("unix://" + dir.resolve("csi.sock")));
        var second = new Second(child, channel);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                ControllerGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS).listVolumes(ListVolumesRequest.getDefaultInstance());
                return second;
            } catch (StatusRuntimeException e) {
                if (System.nanoTime() > deadline) {
                    second.close();
                    throw new AssertionError("the second controller never answered: " + e.getStatus() + "\n" + child.stderr());
                }
                Thread.sleep(250);
            }
        }
    }
}
