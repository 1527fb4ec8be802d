package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.snapshot.Snapshots;
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
        return Snapshots.POINT_PREFIX + ID + "-" + ObjectId.nodeTag(node) + "-";
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
    void aNameWithoutItsCutTimeIsNoPoint() {
        assertFalse(Rounds.isPointFor(prefix("worker-1"), prefix("worker-1")));
        assertFalse(Rounds.isPointFor(prefix("worker-1") + "-", prefix("worker-1")));
        assertFalse(Rounds.isPointFor(prefix("node-a") + 5L, prefix("worker-1")));
    }
}
