package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.ext4;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 28, a one-way partition of the old primary (docs/replication.md, "Confirmation"), with real processes (two
 * image-engine agents over mutual TLS, a controller with {@code --failover-after 8s}) and an iptables rule on loopback
 * that drops every packet leaving A's agent port: the controller's requests still reach A's socket, its answers (and
 * its SYN-ACKs) are lost. What TCP makes of it: A hears the controller's next request or two after its last answer,
 * then nothing (the connection stalls on its unacknowledged segment), so A cannot be told anything during the cut, and
 * the rule "a primary that heard nothing for the delay is unconfirmed" must allow for those last requests heard: A
 * refuses a new writable publish right after the failover, while the cut is in place. The pod already writing on A
 * writes on (as in a two-way partition) until the cut heals; then A is fenced and its pod's writes fail (EROFS); B
 * serves exactly the last round's records. Needs root and iptables (fails with CI=true without them).
 */
class ClusterOneWayPartitionTest {
    static final int FAILOVER_AFTER_S = 8;
    /** From the rule's removal: the stalled connection resumes at TCP's next retransmission (backing off), then a tick. */
    static final long FENCE_BOUND_S = 90;

    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, FAILOVER_AFTER_S));

    @Test
    void aOneWayPartitionedPrimaryIsUnconfirmedAtTheFailoverAndFencedWhenTheCutHeals() throws Exception {
        String iptables = iptables();
        fx.cluster.awaitEveryNode();
        var volume = fx.createReplicated("one-way");
        String id = volume.id(), a = volume.primary(), b = volume.secondary();
        int portA = fx.cluster.agent(a).port;
        boolean aMounted = false;
        boolean bMounted = false;
        FailoverPair.Pod pod = null;
        OneWayCut cut = null;
        Attempts attempts = null;
        try {
            fx.controllerPublish(a, id);
            fx.stageAndPublish(a, id);
            aMounted = true;
            // the pod writes through the staging mount (the same filesystem); its target is free for the second pod below
            // (SINGLE_NODE_WRITER allows one target)
            fx.node(a).nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id)
                    .setTargetPath(fx.target(a, id).toString()).build());
            Path records = fx.staging(a, id).resolve("records");
            writeRecords(records, 0, 2000);
            fx.round(b, a, id);                                    // the last complete point: records 0..1999
            writeRecords(records, 2000, 2500);
            pod = ClusterPartitionTest.pod(records, 2500).start("pod-on-" + a);

            cut = OneWayCut.of(iptables, portA);
            long cutNs = System.nanoTime();
            // the CO retries so that the failover is decided as soon as the controller's silence reaches the delay (the
            // worst case for A): its last answer is read from the kernel (ss: the least lastrcv of the sockets to A's
            // port), and the attempts start when one, waiting Liveness.SILENCE (5 s) for A, ends at the delay
            Thread.sleep(1500);
            long lastAnswerNs = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(sinceLastReceivedMillis("dport", portA));
            long startNs = lastAnswerNs + TimeUnit.SECONDS.toNanos(FAILOVER_AFTER_S - 5);
            while (System.nanoTime() < startNs) Thread.sleep(10);
            attempts = new Attempts(b, id);
            // 0.3 s before the controller's silence reaches the delay, no failover yet: A, which heard the
            // controller after that last answer, already refuses a new pod's writable publish (its kubelet, over A's own
            // socket); with the old rule (unconfirmed after the whole delay) it still took it
            long beforeNs = lastAnswerNs + TimeUnit.MILLISECONDS.toNanos(FAILOVER_AFTER_S * 1000L - 300);
            while (System.nanoTime() < beforeNs) Thread.sleep(10);
            assertTrue(attempts.first.get() == 0, "failed over before the delay");
            assertUnconfirmed(a, id);
            long failoverNs = attempts.awaitFirst();
            int firstAfterFailover = pod.next.get();
            assertTrue(fx.state(b, id).contains("\"PRIMARY\""), fx.state(b, id));
            assertUnconfirmed(a, id);                            // and at once after the failover, the cut still in place
            long refusedNs = System.nanoTime();
            String stateDuringCut = fx.state(a, id);
            long heardNs = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(sinceLastReceivedMillis("sport", portA));
            String sockets = run(List.of("ss", "-tni", "state", "established", "( sport = :" + portA + " or dport = :" + portA + " )"));

            attempts.join();
            Path onB = fx.stageAndPublish(b, id);               // what the cluster serves: exactly the last round's records
            bMounted = true;
            assertRecords(onB.resolve("records"), 2000);
            int beforeHeal = pod.next.get();
            System.out.printf("one-way cut of %s (port %d): failed over to %s %d ms after the cut (%s UNAVAILABLE first) (its"
                            + " last answer %d ms before the cut; %s last received %d ms after that answer; its silence at the"
                            + " failover %d ms, the delay %d ms); a new writable publish on %s refused UNAVAILABLE 0.3 s before and"
                            + " %d ms after the failover; its state during the cut %s; %d records written on it after the failover; connections on"
                            + " its port during the cut:%n%s%n",
                    id, portA, b, (failoverNs - cutNs) / 1_000_000, attempts.unavailable.get() + ", the last at " + attempts.last.get(),
                    (cutNs - lastAnswerNs) / 1_000_000, a, (heardNs - lastAnswerNs) / 1_000_000, (failoverNs - heardNs) / 1_000_000,
                    FAILOVER_AFTER_S * 1000, a, (refusedNs - failoverNs) / 1_000_000, stateDuringCut.replaceAll("\\s+", ""),
                    beforeHeal - firstAfterFailover, sockets);

            cut.close();
            cut = null;
            long healNs = System.nanoTime();
            long fencedNs = fx.awaitFencedAndPodStopped(a, id, pod, healNs, FENCE_BOUND_S, "the cut's removal");
            pod.join();
            assertTrue(ClusterPartitionTest.readOnlyError(pod.stoppedBy.get()), "the pod's write failed with EROFS: " + pod.stoppedBy.get());
            System.out.printf("after the cut's removal %s was FENCED in %d ms and its pod's writes failed (EROFS) in %d ms%n",
                    a, (fencedNs - healNs) / 1_000_000, (pod.stoppedAt - healNs) / 1_000_000);
            assertRecords(onB.resolve("records"), 2000);        // A's writes reached nothing the cluster serves
        } finally {
            if (attempts != null) attempts.join();
            if (cut != null) cut.close();
            if (pod != null) pod.stop();
            if (aMounted) fx.unpublishAndUnstage(a, id);
            if (bMounted) fx.unpublishAndUnstage(b, id);
        }
    }

    /** A new pod's writable NodePublishVolume on {@code node}'s target: UNAVAILABLE, its primary unconfirmed. */
    static void assertUnconfirmed(String node, String id) throws Exception {
        var refused = assertThrows(StatusRuntimeException.class, () -> fx.node(node).nodePublishVolume(NodePublishVolumeRequest
                .newBuilder().setVolumeId(id).setStagingTargetPath(fx.staging(node, id).toString())
                .setTargetPath(fx.target(node, id).toString()).setVolumeCapability(ext4()).build()));
        assertEquals(Status.Code.UNAVAILABLE, refused.getStatus().getCode(), refused.toString());
        assertTrue(refused.getStatus().getDescription().contains("unconfirmed"), refused.toString());
    }

    /**
     * ControllerPublishVolume on {@code node} by a CO retrying often: a new attempt every 200 ms on a virtual thread
     * (each waits up to 5 s for the silent node, Liveness.SILENCE), so the failover is decided within about 200 ms of
     * the controller's silence reaching the delay, the earliest a CO's retry can happen to catch it; then A has been
     * silent, by its own clock, for the delay less what it heard after its last answer reached the controller.
     */
    static final class Attempts {
        final AtomicInteger unavailable = new AtomicInteger();
        /** The last UNAVAILABLE answer, when it came (ms from the start) and what it said. */
        final AtomicReference<String> last = new AtomicReference<>("none");
        private final long started = System.nanoTime();
        final AtomicLong first = new AtomicLong();
        private final AtomicReference<Throwable> failed = new AtomicReference<>();
        private final List<Thread> threads = new CopyOnWriteArrayList<>();
        private final Thread starter;

        Attempts(String node, String id) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            starter = Thread.ofVirtual().start(() -> {
                while (first.get() == 0 && failed.get() == null && System.nanoTime() < deadline) {
                    threads.add(Thread.ofVirtual().start(() -> {
                        try {
                            fx.controllerPublish(node, id);
                            first.compareAndSet(0, System.nanoTime());
                        } catch (StatusRuntimeException e) {
                            if (e.getStatus().getCode() == Status.Code.UNAVAILABLE) {
                                unavailable.incrementAndGet();
                                last.set((System.nanoTime() - started) / 1_000_000 + " ms: " + e.getStatus().getDescription());
                            }
                            else failed.compareAndSet(null, e);
                        }
                    }));
                    try {
                        Thread.sleep(200);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
        }

        /** When the first attempt succeeded (System.nanoTime); the others may still be waiting. */
        long awaitFirst() throws Exception {
            while (first.get() == 0 && failed.get() == null && starter.isAlive()) Thread.sleep(20);
            if (failed.get() != null) throw new AssertionError("a publish failed otherwise than UNAVAILABLE", failed.get());
            assertTrue(first.get() != 0, "no failover within 120 s");
            return first.get();
        }

        /** Every attempt ended (each within about 5 s). */
        void join() throws InterruptedException {
            starter.interrupt();
            starter.join(30_000);
            for (var t : threads) t.join(30_000);
        }
    }

    /**
     * An iptables rule on loopback dropping every TCP packet that leaves {@code port} (the agent's answers, its ACKs, its
     * SYN-ACKs), named by a comment with this JVM's pid so a leftover is identifiable; {@link #close} deletes it.
     */
    record OneWayCut(String iptables, List<String> spec) implements AutoCloseable {
        static OneWayCut of(String iptables, int port) throws Exception {
            var spec = List.of("OUTPUT", "-o", "lo", "-p", "tcp", "--sport", String.valueOf(port), "-m", "comment", "--comment",
                    "csi4j-test-" + ProcessHandle.current().pid(), "-j", "DROP");
            var cut = new OneWayCut(iptables, spec);
            cut.iptables("-I");
            return cut;
        }

        private void iptables(String op) throws Exception {
            var command = new ArrayList<>(List.of(iptables, "-w", op));
            command.addAll(spec);
            run(command);
        }

        @Override
        public void close() throws Exception {
            iptables("-D");
        }
    }

    /** The iptables command; the test fails with CI=true without it, ss or root (.ci/run installs them), and is skipped elsewhere. */
    static String iptables() {
        Privileged.requireRoot();
        Privileged.require(tool("ss").isPresent(), "test needs ss (Debian package iproute2)");
        var found = tool("iptables");
        Privileged.require(found.isPresent(), "test needs iptables (Debian package iptables)");
        return found.get();
    }

    private static java.util.Optional<String> tool(String name) {
        return Stream.concat(Stream.of(System.getenv().getOrDefault("PATH", "").split(":")), Stream.of("/usr/sbin", "/sbin", "/usr/bin"))
                .map(d -> Path.of(d.isEmpty() ? "." : d, name)).filter(Files::isExecutable).findFirst().map(Path::toString);
    }

    /** The least time since data was received on an established socket whose {@code side} ("sport", "dport") is {@code port} (ss's lastrcv). */
    static long sinceLastReceivedMillis(String side, int port) throws Exception {
        var matcher = java.util.regex.Pattern.compile("lastrcv:(\\d+)")
                .matcher(run(List.of("ss", "-tni", "state", "established", "( " + side + " = :" + port + " )")));
        long least = Long.MAX_VALUE;
        while (matcher.find()) least = Math.min(least, Long.parseLong(matcher.group(1)));
        assertTrue(least != Long.MAX_VALUE, "no established connection to port " + port);
        return least;
    }

    static String run(List<String> command) throws Exception {
        var p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, command + ": " + out);
        return out;
    }
}
