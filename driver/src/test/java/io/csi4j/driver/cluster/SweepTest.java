package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.driver.id.ReplicatedVolumeId;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The sweep's decisions, one tick's answers at a time (docs/replication.md, "Deletion"). */
class SweepTest {
    private static final String ID = ReplicatedVolumeId.generate(List.of("node-a", "node-b", "node-c")).toString();
    private static final Instant NOW = Instant.ofEpochSecond(1_800_000_000L);
    private static final Duration GRACE = Duration.ofMinutes(10);
    private static final Instant OLD = NOW.minus(GRACE);
    private static final Instant YOUNG = NOW.minusSeconds(5);

    private static Sweep.Listing holding(String... states) {
        return new Sweep.Listing(Set.of(states), Map.of());
    }

    private static Sweep.Listing tombstone(Instant at) {
        return new Sweep.Listing(Set.of(), Map.of(ID, at));
    }

    private static Sweep.Plan plan(Object... nodeAndListing) {
        Map<String, Sweep.Listing> answered = new LinkedHashMap<>();
        for (int i = 0; i < nodeAndListing.length; i += 2) answered.put((String) nodeAndListing[i], (Sweep.Listing) nodeAndListing[i + 1]);
        return Sweep.plan(answered, NOW, GRACE);
    }

    private static List<Sweep.Action> on(String... nodes) {
        return java.util.Arrays.stream(nodes).map(n -> new Sweep.Action(n, ID)).toList();
    }

    @Test
    void theReturningNodesLeftoverIsSweptAndTheTombstonesStay() {
        var p = plan("node-a", tombstone(OLD), "node-b", holding(ID), "node-c", tombstone(OLD));
        assertEquals(on("node-b"), p.sweeps());
        assertEquals(List.of(), p.forgets(), "a tombstone outlives the sweep");
    }

    @Test
    void aNodeHoldingBothItsTombstoneAndAStateACrashLeftIsSwept() {
        var both = new Sweep.Listing(Set.of(ID), Map.of(ID, YOUNG));
        assertEquals(on("node-a"), plan("node-a", both, "node-b", holding()).sweeps());
    }

    @Test
    void tombstonesGoOnlyWhenEveryNodeAnsweredCleanAndTheGracePassed() {
        assertEquals(on("node-a", "node-c"), plan("node-a", tombstone(OLD), "node-b", holding(), "node-c", tombstone(OLD)).forgets());
        assertEquals(on("node-a"), plan("node-a", tombstone(OLD), "node-b", holding(), "node-c", tombstone(YOUNG)).forgets(),
                "each tombstone its own age");
        assertEquals(List.of(), plan("node-a", tombstone(OLD), "node-c", tombstone(OLD)).forgets(), "node-b did not answer: kept");
        assertEquals(List.of(), plan("node-a", tombstone(YOUNG), "node-b", holding(), "node-c", holding()).forgets(), "too young");
        assertEquals(List.of(), plan("node-a", tombstone(OLD), "node-b", holding(ID), "node-c", holding()).forgets(),
                "a leftover is still there");
    }

    @Test
    void aNodeOutsideTheSetCountsForNothingAndOtherVolumesAreUntouched() {
        String other = ReplicatedVolumeId.generate(List.of("node-a", "node-b")).toString();
        var p = plan("node-a", tombstone(OLD), "node-b", holding(other), "node-d", holding(other));
        assertEquals(List.of(), p.sweeps());
        assertEquals(List.of(), p.forgets(), "node-c never answered");
        assertEquals(List.of(), plan("node-a", holding(ID), "node-b", holding(ID), "node-c", holding()).sweeps(), "no tombstone: a live volume");
    }
}
