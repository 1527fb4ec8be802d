package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.model.SnapshotRecord;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which holder a replication point was cut for ({@link Rounds#isPointFor}): its name is the volume's prefix, the
 * holder's node tag, a dash and the cut's System.nanoTime(). Node tags are DNS names, so one may start with another
 * and a dash ("worker-1", "worker-1-gpu", "worker-1-2"): a point of one is never the other's (a bare startsWith made a
 * cut for "worker-1" delete the point "worker-1-gpu" holds, its next round's base).
 */
class PointHolderTest {
    private static final ReplicatedVolumeId ID = ReplicatedVolumeId.generate(List.of("node-a", "worker-1", "worker-1-gpu"));

    private static String prefix(String node) {
        return SnapshotRecord.POINT_PREFIX + ID + "-" + ObjectId.nodeTag(node) + "-";
    }

    @Test
    void aPointIsItsOwnHolders() {
        assertTrue(Rounds.isPointFor(prefix("worker-1") + 123456789L, prefix("worker-1")));
        assertTrue(Rounds.isPointFor(prefix("worker-1-gpu") + 7L, prefix("worker-1-gpu")));
        assertTrue(Rounds.isPointFor(prefix("worker-1") + (-42L), prefix("worker-1")), "a negative nanoTime");
    }

    @Test
    void aPointOfAHolderWhoseTagExtendsThisOnesIsNotThisOnes() {
        String ofGpu = prefix("worker-1-gpu") + 123456789L;
        assertTrue(ofGpu.startsWith(prefix("worker-1")), "the old rule's mistake: the name does start so");
        assertFalse(Rounds.isPointFor(ofGpu, prefix("worker-1")));
        assertFalse(Rounds.isPointFor(prefix("worker-1-2") + 99L, prefix("worker-1")), "a tag extended by digits");
        assertFalse(Rounds.isPointFor(prefix("worker-1-2") + (-99L), prefix("worker-1")));
        assertFalse(Rounds.isPointFor(prefix("worker-1") + 1L, prefix("worker-1-gpu")));
    }

    @Test
    void aHolderTheIdNamesByTheHashOfItsLongNodeNameHasItsPoints() {
        List<String> nodes = List.of("ip-10-0-1-23.eu-west-1.compute.internal", "ip-10-0-2-41.eu-west-1.compute.internal",
                "ip-10-0-3-17.eu-west-1.compute.internal");
        ReplicatedVolumeId id = ReplicatedVolumeId.generate(nodes);
        assertTrue(id.tags().stream().anyMatch(t -> t.startsWith("_")), "three such names make the id hash a tag: " + id);
        for (int k = 0; k < nodes.size(); k++) {
            String tag = id.tags().get(k);
            for (long nanos : new long[] {123456789L, -5L}) {
                // Rounds.cutPoint names a point with the holder's node tag, the plain name
                String name = SnapshotRecord.POINT_PREFIX + id + "-" + ObjectId.nodeTag(nodes.get(k)) + "-" + nanos;
                assertTrue(Rounds.isPointOf(name, id, tag), name + " is " + tag + "'s");
                for (int other = 0; other < nodes.size(); other++) {
                    if (other != k) assertFalse(Rounds.isPointOf(name, id, id.tags().get(other)), name + " is not " + id.tags().get(other) + "'s");
                }
            }
        }
        int hashed = id.tags().indexOf(id.tags().stream().filter(t -> t.startsWith("_")).findFirst().orElseThrow());
        String name = SnapshotRecord.POINT_PREFIX + id + "-" + ObjectId.nodeTag(nodes.get(hashed)) + "-" + 7L;
        assertFalse(Rounds.isPointFor(name, SnapshotRecord.POINT_PREFIX + id + "-" + id.tags().get(hashed) + "-"),
                "the old rule, the id's tag as the prefix, found none of its points");
        assertFalse(Rounds.isPointOf(SnapshotRecord.POINT_PREFIX + id + "-" + 7L, id, id.tags().get(hashed)), "no holder in the name");
    }

    @Test
    void aNameWithoutItsCutTimeIsNoPoint() {
        assertFalse(Rounds.isPointFor(prefix("worker-1"), prefix("worker-1")));
        assertFalse(Rounds.isPointFor(prefix("worker-1") + "-", prefix("worker-1")));
        assertFalse(Rounds.isPointFor(prefix("node-a") + 5L, prefix("worker-1")));
    }
}
