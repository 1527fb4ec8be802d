package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.driver.cluster.Confirm.Copy;
import io.csi4j.driver.id.ReplicatedVolumeId;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** When the scheduler confirms an unconfirmed primary (docs/replication.md, "Confirmation"): one tick's answers. */
class ConfirmTest {
    private static final ReplicatedVolumeId TWO = ReplicatedVolumeId.generate(List.of("node-a", "node-b"));
    private static final ReplicatedVolumeId THREE = ReplicatedVolumeId.generate(List.of("node-a", "node-b", "node-c"));

    private static Copy primary(String node, long epoch, boolean unconfirmed) {
        return new Copy(node, "PRIMARY", epoch, unconfirmed);
    }

    private static Copy secondary(String node, long epoch) {
        return new Copy(node, "SECONDARY", epoch, false);
    }

    @Test
    void onlyWithEveryNamedNodeAnsweringAndThePrimaryAtTheHighestEpoch() {
        var a1 = primary("node-a", 1, true);
        record Row(String why, ReplicatedVolumeId id, Set<String> answered, List<Copy> copies, boolean tombstoned, Optional<Copy> expected) {}
        var rows = List.of(
                new Row("restart, its secondary answers", TWO, Set.of("node-a", "node-b"), List.of(a1, secondary("node-b", 1)), false, Optional.of(a1)),
                new Row("THE HOLE: the failed-over primary's node is silent", TWO, Set.of("node-a"), List.of(a1), false, Optional.empty()),
                new Row("a named node answered but holds no copy: still every node answered", TWO, Set.of("node-a", "node-b"),
                        List.of(a1), false, Optional.of(a1)),
                new Row("answering nodes of other volumes do not count", TWO, Set.of("node-a", "node-c", "node-d"), List.of(a1), false,
                        Optional.empty()),
                new Row("a higher epoch elsewhere: superseded, never confirmed", TWO, Set.of("node-a", "node-b"),
                        List.of(a1, primary("node-b", 2, false)), false, Optional.empty()),
                new Row("a higher secondary epoch elsewhere (a handoff under way)", TWO, Set.of("node-a", "node-b"),
                        List.of(a1, secondary("node-b", 2)), false, Optional.empty()),
                new Row("the failed-over primary itself, back with the old one fenced", TWO, Set.of("node-a", "node-b"),
                        List.of(new Copy("node-a", "FENCED", 2, false), primary("node-b", 2, true)), false,
                        Optional.of(primary("node-b", 2, true))),
                new Row("already confirmed: nothing to send", TWO, Set.of("node-a", "node-b"),
                        List.of(primary("node-a", 1, false), secondary("node-b", 1)), false, Optional.empty()),
                new Row("a tombstone: deleted, never confirmed", TWO, Set.of("node-a", "node-b"), List.of(a1, secondary("node-b", 1)), true,
                        Optional.empty()),
                new Row("three replicas, one silent", THREE, Set.of("node-a", "node-b"), List.of(a1, secondary("node-b", 1)), false,
                        Optional.empty()),
                new Row("three replicas, all answer", THREE, Set.of("node-a", "node-b", "node-c"),
                        List.of(a1, secondary("node-b", 1), secondary("node-c", 1)), false, Optional.of(a1)));
        for (Row r : rows) assertEquals(r.expected(), Confirm.which(r.id(), r.answered(), r.copies(), r.tombstoned()), r.why());
    }
}
