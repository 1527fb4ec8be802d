package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterChecksumResyncKillTest.sha256;
import static io.csi4j.cli.cluster.ClusterChecksumResyncKillTest.sum;
import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.proto.cluster.ListCopiesRequest;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The steps of the resync kill tests on a {@link FailoverPair} whose agents copy at {@code --copy-bandwidth 4M} (a
 * 16 MiB difference takes seconds): the receiving agent SIGKILLed in the middle of a round; its image compared byte for
 * byte with the point its state names; started again with nothing left in its {@code .tmp}; the tests' data served
 * by it after a handoff (their records, and their files "first" and "second" compared by SHA-256).
 */
final class KillMidCopy {
    static final long MIB = 1L << 20;

    private KillMidCopy() {}

    /** The agent killed: the point its durable state then names ("" for none), and when (a System.nanoTime). */
    record Killed(String point, long at) {}

    /**
     * Waits (60 s at most) until {@code node} receives a round of the volume (NodeAgent.ListCopies) with 4 to 8 MiB
     * of it arrived, then SIGKILLs its agent by its pid. At most 8: the rounds carry 16 MiB and more at 4 MiB/s, so the
     * kill lands two seconds or more before the copy's end, never between its replica kept and the image renamed (a
     * correct outcome, rolled forward at the start, whose next round would be a delta, not the resync these tests want).
     */
    static Killed midResync(FailoverPair fx, String node, String id) throws Exception {
        var agent = fx.agent(node);   // one channel for the whole wait
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String seen = "nothing";
        while (System.nanoTime() < deadline) {
            try {
                for (var copy : agent.withDeadlineAfter(5, TimeUnit.SECONDS).listCopies(ListCopiesRequest.getDefaultInstance()).getCopiesList()) {
                    seen = copy.getName() + " " + copy.getBytesDone() + "/" + copy.getBytesTotal();
                    if (copy.getIncoming() && copy.getName().contains(id) && copy.getBytesDone() >= 4 * MIB && copy.getBytesDone() <= 8 * MIB) {
                        System.out.printf("in the middle of the resync of %s on %s: %s%n", id, node, seen);
                        fx.cluster.agent(node).child.signal("KILL");
                        long at = System.nanoTime();
                        return new Killed(fx.point(node, id), at);
                    }
                }
            } catch (StatusRuntimeException e) {
                // busy: ask again
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no resync of " + id + " seen in its middle on " + node + " within 60 s; last seen: " + seen
                + "\n" + fx.cluster.agent(node).child.stderr().lines().filter(l -> l.contains(id) && !l.contains("call: ")).toList());
    }

    /** The volume's image on the node (its pool's volumes/). */
    static Path image(FailoverPair fx, String node, String id) {
        return fx.dataDir(node).resolve("pool").resolve("volumes").resolve(id + ".img");
    }

    /**
     * The copy on {@code node} (its image's SHA-256 {@code imageSha256}) is byte for byte {@code point}, compared with
     * the snapshot of it on {@code cutBy}, the node that cut it, while that node keeps it; returns whether it did.
     */
    static boolean assertImageIsPoint(FailoverPair fx, String node, String point, String cutBy, String imageSha256) throws Exception {
        Path cut = fx.dataDir(cutBy).resolve("pool").resolve("snapshots").resolve(point + ".img");
        boolean kept = Files.exists(cut);
        if (kept) assertEquals(sha256(cut), imageSha256, "the copy on " + node + " is point " + point + " byte for byte");
        return kept;
    }

    /** The killed agent started again (same data directory and port): nothing left in its .tmp after its start. */
    static void restartedClean(FailoverPair fx, String node) throws Exception {
        fx.cluster.agent(node).start();
        fx.cluster.awaitEveryNode();
        assertEquals(List.of(), fx.tmpFiles(node), "nothing left in " + node + "'s .tmp after its start");
    }

    /** The mount serves every record of the test and both its files byte-identical. */
    static void assertServes(Path mount, int records, byte[] first, byte[] second) throws Exception {
        assertRecords(mount.resolve("records"), records);
        assertArrayEquals(first, sum(mount.resolve("first")));
        assertArrayEquals(second, sum(mount.resolve("second")));
    }
}
