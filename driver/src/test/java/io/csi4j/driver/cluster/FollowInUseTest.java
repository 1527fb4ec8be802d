package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.driver.cluster.Confirm.Copy;
import io.csi4j.driver.id.ReplicatedVolumeId;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A fenced copy whose agent lists it in use (its old pod's mounts are still there) is not told to follow: it would refuse
 * each tick, a call, a refusal and an agent log line a second for as long as the mounts stay. The listing says so
 * (ReplicaEntry.in_use, looked at for FENCED copies only); the tick after the mounts go, it follows.
 */
class FollowInUseTest {
    private static final ReplicatedVolumeId THREE = ReplicatedVolumeId.generate(List.of("node-a", "node-b", "node-c"));

    @Test
    void aFencedCopyInUseIsNotAskedUntilItsMountsGo() {
        var b2 = new Copy("node-b", "PRIMARY", 2, false, false);
        var c1 = new Copy("node-c", "SECONDARY", 1, false, false);
        var aFencedStaged = new Copy("node-a", "FENCED", 2, false, true);
        var aFencedFree = new Copy("node-a", "FENCED", 2, false, false);
        record Row(String why, List<Copy> copies, List<Copy> expected) {}
        var rows = List.of(
                new Row("fenced and staged: left out, the other secondary still follows", List.of(aFencedStaged, b2, c1), List.of(c1)),
                new Row("fenced and staged, nothing else behind: no call at all", List.of(aFencedStaged, b2), List.of()),
                new Row("its mounts gone (the next listing): it follows", List.of(aFencedFree, b2, c1), List.of(aFencedFree, c1)),
                new Row("fenced below the epoch and staged: left out", List.of(new Copy("node-a", "FENCED", 1, false, true), b2), List.of()));
        for (Row row : rows) {
            var plan = Follow.which(THREE, row.copies(), false);
            assertEquals(row.expected(), plan.copies(), row.why());
            assertEquals(2, plan.epoch(), row.why());
        }
    }
}
