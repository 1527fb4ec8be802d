package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.driver.cluster.Confirm.Copy;
import io.csi4j.driver.id.ReplicatedVolumeId;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which copies the scheduler tells to follow the primary's epoch (docs/replication.md, "Failover (as built)"): one tick's answers. */
class FollowTest {
    private static final ReplicatedVolumeId THREE = ReplicatedVolumeId.generate(List.of("node-a", "node-b", "node-c"));

    private static Copy copy(String node, String role, long epoch) {
        return new Copy(node, role, epoch, false);
    }

    @Test
    void copiesBehindTheOnePrimaryOfTheHighestEpochFollowIt() {
        var b2 = copy("node-b", "PRIMARY", 2);
        var c1 = copy("node-c", "SECONDARY", 1);
        var a2fenced = copy("node-a", "FENCED", 2);
        var a1fenced = copy("node-a", "FENCED", 1);
        record Row(String why, List<Copy> copies, boolean tombstoned, List<Copy> expected) {}
        var rows = List.of(
                new Row("after a failover to B: the other secondary, the old primary still silent", List.of(b2, c1), false, List.of(c1)),
                new Row("the old primary back and fenced at the new epoch, too", List.of(a2fenced, b2, c1), false, List.of(a2fenced, c1)),
                new Row("a copy fenced below the epoch", List.of(a1fenced, b2), false, List.of(a1fenced)),
                new Row("the old primary not fenced yet (fenced first, this tick)", List.of(copy("node-a", "PRIMARY", 1), b2, c1), false,
                        List.of(c1)),
                new Row("everyone follows already", List.of(b2, copy("node-c", "SECONDARY", 2), copy("node-a", "SECONDARY", 2)), false, List.of()),
                new Row("a handoff under way (epoch 3, no primary yet): nothing", List.of(copy("node-b", "SECONDARY", 3), c1), false, List.of()),
                new Row("no primary answers (its node silent): nothing", List.of(c1, copy("node-a", "SECONDARY", 1)), false, List.of()),
                new Row("fenced above the answering primary (a higher epoch is silent): nothing for it",
                        List.of(copy("node-a", "FENCED", 3), b2, c1), false, List.of()),
                new Row("tombstoned: swept, not followed", List.of(b2, c1), true, List.of()),
                new Row("a node the id does not name is not told", List.of(b2, copy("node-z", "SECONDARY", 1)), false, List.of()));
        for (Row row : rows) {
            var plan = Follow.which(THREE, row.copies(), row.tombstoned());
            assertEquals(row.expected(), plan.copies(), row.why());
            if (!row.expected().isEmpty()) assertEquals(2, plan.epoch(), row.why());
        }
    }
}
