package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 28, "never two writable primaries", with real processes (two image-engine agents over mutual TLS, a controller
 * with {@code --failover-after 8s}): the primary's agent is SIGSTOPped while the pod keeps writing through the kernel
 * mount, the volume fails over to the secondary, and the agent is SIGCONTed. Its copy must be fenced, and its mount
 * read-only (EROFS), within a bounded time without any call routed to it (the controller's scheduler sees it answer
 * PRIMARY below the new epoch); the new primary holds exactly the records of the last round; and the old node, made
 * primary again later by a handoff, gets the new primary's data, never its own post-failover writes.
 */
class ClusterPartitionTest {
    static final int FAILOVER_AFTER_S = 8;
    /** Generous: the scheduler ticks every second, but the machine is shared. */
    static final long FENCE_BOUND_S = 45;

    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, FAILOVER_AFTER_S));

    /**
     * The pod on A: one sequence-numbered, checksummed record at a time, each opened, written, fsynced and closed (as a
     * log appender does), until a write fails; what failed is kept.
     */
    static FailoverPair.Pod pod(Path file, int from) {
        return new FailoverPair.Pod("pod", (bytes, offset) -> {
            try (var ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.write(bytes, offset);
                ch.force(true);
            }
        }, from);
    }

    static boolean readOnlyError(IOException e) {
        return e instanceof FileSystemException f && f.getReason() != null && f.getReason().contains("Read-only file system");
    }

    @Test
    void aPartitionedPrimaryIsFencedReadOnlyAndNoneOfItsLaterWritesReachTheCluster() throws Exception {
        fx.cluster.awaitEveryNode();                           // the other test restarts an agent
        var volume = fx.createReplicated("partition");
        String id = volume.id(), a = volume.primary(), b = volume.secondary();
        var agentA = fx.cluster.agent(a);
        try (var mounted = fx.mounted(id, a)) {
            Path onA = mounted.recordsAroundARound(a, b, 2000, 2500);   // the last complete point: records 0..1999; a failover costs the rest
            Path records = onA.resolve("records");

            var pod = pod(records, 2500).start("pod-on-" + a); // writes on through the kernel mount while A's agent is stopped
            mounted.first(pod::stop);
            var failover = fx.stopAgentUntilFailover(a, b, id);
            mounted.first(() -> agentA.child.signal("CONT"));  // a no-op once continued
            int firstAfterFailover = pod.next.get();            // every record from here on was written after the failover
            assertTrue(fx.state(b, id).contains("\"PRIMARY\""), fx.state(b, id));
            Thread.sleep(2000);                                 // the partitioned pod goes on writing
            assertTrue(pod.stoppedBy.get() == null, "the pod on " + a + " kept writing while its agent was stopped: " + pod.stoppedBy.get());
            int beforeCont = pod.next.get();
            assertTrue(beforeCont > firstAfterFailover, "records written on " + a + " after the failover: " + (beforeCont - firstAfterFailover));

            agentA.child.signal("CONT");
            long contNs = System.nanoTime();
            long fencedNs = fx.awaitFencedAndPodStopped(a, id, pod, contNs, FENCE_BOUND_S, "SIGCONT");
            pod.join();
            var error = pod.stoppedBy.get();
            assertTrue(readOnlyError(error), "the pod's write failed with EROFS: " + error);
            // a new file, on the publish bind and on the staging mount: read-only too
            var viaTarget = assertThrows(FileSystemException.class, () -> Files.writeString(onA.resolve("after-fence"), "x"));
            assertTrue(readOnlyError(viaTarget), viaTarget.toString());
            var viaStaging = assertThrows(FileSystemException.class, () -> Files.writeString(fx.staging(a, id).resolve("after-fence"), "x"));
            assertTrue(readOnlyError(viaStaging), viaStaging.toString());
            int writtenOnA = pod.next.get();
            System.out.printf("partition of %s: failed over to %s %d ms after SIGSTOP (%d UNAVAILABLE first); after SIGCONT %s was"
                            + " FENCED in %d ms and its pod's writes failed (EROFS) in %d ms; %d records written on %s after the failover%n",
                    id, b, failover.millis(), failover.unavailable(), a, (fencedNs - contNs) / 1_000_000,
                    (pod.stoppedAt - contNs) / 1_000_000, writtenOnA - firstAfterFailover, a);

            // what the cluster serves: exactly the last round's records on B, none written on A after it
            Path onB = mounted.on(b);
            assertRecords(onB.resolve("records"), 2000);
            writeRecords(onB.resolve("records"), 2000, 2100);  // B's own writes as the primary

            // A, later made primary again by a handoff, holds B's point, never its own writes after the failover
            mounted.gone(b);
            mounted.off(a);                                     // the CO's clean-up of the old pod: the read-only mounts go
            long handoff = System.nanoTime();
            fx.controllerPublish(a, id);
            System.out.printf("handoff back to %s (its fenced image replaced by %s's point): %d ms%n", a, b,
                    (System.nanoTime() - handoff) / 1_000_000);
            assertTrue(fx.state(a, id).contains("\"PRIMARY\"") && fx.state(a, id).contains("\"3\""), fx.state(a, id));
            Path back = mounted.on(a);
            assertRecords(back.resolve("records"), 2100);       // exactly B's data: nothing A wrote from record 2000 on
        }
    }

    /**
     * The old primary's agent is killed during the partition (its mounts stay, its pod keeps writing) and comes back
     * holding PRIMARY at the old epoch: the scheduler fences it within a few ticks of its first answer, without a
     * routed call. Then a writable mount of a copy already FENCED (as a crash between the durable fence and the
     * remount would leave it; here remounted rw by hand while the agent is down) is read-only again before the
     * restarted agent serves anything.
     */
    @Test
    void aReturningOldPrimaryIsFencedAtOnceAndAWritableMountOfAFencedCopyIsFixedAtStartUp() throws Exception {
        fx.cluster.awaitEveryNode();
        var volume = fx.createReplicated("partition-restart");
        String id = volume.id(), a = volume.primary(), b = volume.secondary();
        var agentA = fx.cluster.agent(a);
        try (var mounted = fx.mounted(id, a)) {
            Path onA = mounted.recordsAroundARound(a, b, 1000, 1200);
            Path records = onA.resolve("records");

            agentA.child.signal("KILL");
            var pod = pod(records, 1200).start("pod-on-" + a);
            mounted.first(pod::stop);
            fx.publishRetryingWhileUnavailable(b, id);
            int firstAfterFailover = pod.next.get();
            Thread.sleep(1500);
            assertTrue(pod.stoppedBy.get() == null && pod.next.get() > firstAfterFailover, "the pod on " + a + " kept writing: "
                    + pod.stoppedBy.get());

            long restarted = System.nanoTime();
            agentA.start();                                     // PRIMARY at epoch 1 on its disk; returns once it serves
            long serving = System.nanoTime();
            // bounded from when it serves: its JVM's start-up alone took 26 s and more on the loaded machine
            long fencedNs = fx.awaitFencedAndPodStopped(a, id, pod, serving, FENCE_BOUND_S, "the restarted agent serving");
            pod.join();
            assertTrue(readOnlyError(pod.stoppedBy.get()), "the pod's write failed with EROFS: " + pod.stoppedBy.get());
            System.out.printf("restart of %s's agent after a failover to %s (serving %d ms after its start): FENCED %d ms and its"
                            + " pod's writes failed (EROFS) %d ms after it served; %d records written on %s after the failover%n", a, b,
                    (serving - restarted) / 1_000_000, (fencedNs - serving) / 1_000_000, (pod.stoppedAt - serving) / 1_000_000,
                    pod.next.get() - firstAfterFailover, a);

            // a FENCED copy found writable at start-up
            agentA.child.signal("KILL");
            var remount = new ProcessBuilder("mount", "-o", "remount,rw", fx.staging(a, id).toString()).inheritIO().start();
            assertTrue(remount.waitFor(30, TimeUnit.SECONDS) && remount.exitValue() == 0, "mount -o remount,rw");
            Files.writeString(onA.resolve("writable-again"), "x");    // the state alone does not stop this
            long again = System.nanoTime();
            agentA.start();                                     // returns once it serves
            var e = assertThrows(FileSystemException.class, () -> Files.writeString(onA.resolve("after-restart"), "x"));
            assertTrue(readOnlyError(e), e.toString());
            System.out.printf("a writable mount of the FENCED copy on %s was read-only when its restarted agent served (%d ms"
                    + " after its start)%n", a, (System.nanoTime() - again) / 1_000_000);

            assertRecords(mounted.on(b).resolve("records"), 1000);
        }
    }
}
