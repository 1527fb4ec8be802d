package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.id.ReplicatedVolumeId;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A node declared permanently lost (docs/replication.md, "A node lost for good"): which tombstones may go given the
 * answering and the forgotten nodes ({@link Sweep}), when a node may be forgotten, and what the controller makes of the
 * agents' marks ({@link LostNodes}).
 */
class LostNodesTest {
    private static final String ID = ReplicatedVolumeId.generate(List.of("node-a", "node-b", "node-c")).toString();
    private static final String PAIR = ReplicatedVolumeId.generate(List.of("node-a", "node-c")).toString();
    private static final Instant NOW = Instant.ofEpochSecond(1_800_000_000L);
    private static final Duration GRACE = Duration.ofMinutes(10);
    private static final Instant OLD = NOW.minus(GRACE);
    private static final Instant YOUNG = NOW.minusSeconds(5);
    private static final Duration DELAY = Duration.ofSeconds(30);

    private static Sweep.Listing clean() {
        return new Sweep.Listing(Set.of(), Map.of());
    }

    private static Sweep.Listing tombstones(Instant at, String... ids) {
        Map<String, Instant> t = new LinkedHashMap<>();
        for (String id : ids) t.put(id, at);
        return new Sweep.Listing(Set.of(), t);
    }

    /** One row of the table: who answered with what, who is forgotten, and the forgets expected. */
    private record Row(String why, Map<String, Sweep.Listing> answered, Set<String> forgotten, List<Sweep.Action> forgets,
                       List<Sweep.Action> sweeps) {}

    private static Map<String, Sweep.Listing> answered(Object... nodeAndListing) {
        Map<String, Sweep.Listing> m = new LinkedHashMap<>();
        for (int i = 0; i < nodeAndListing.length; i += 2) m.put((String) nodeAndListing[i], (Sweep.Listing) nodeAndListing[i + 1]);
        return m;
    }

    private static List<Sweep.Action> on(String id, String... nodes) {
        return java.util.Arrays.stream(nodes).map(n -> new Sweep.Action(n, id)).toList();
    }

    @Test
    void whichTombstonesMayGoGivenTheAnsweringAndTheForgottenNodes() {
        var rows = List.of(
                new Row("node-c silent, not forgotten: kept for good (today's rule)",
                        answered("node-a", tombstones(OLD, ID), "node-b", tombstones(OLD, ID)), Set.of(), List.of(), List.of()),
                new Row("node-c forgotten: it counts as answered holding nothing",
                        answered("node-a", tombstones(OLD, ID), "node-b", tombstones(OLD, ID)), Set.of("node-c"), on(ID, "node-a", "node-b"),
                        List.of()),
                new Row("forgotten, but the grace has not passed: each tombstone its own age",
                        answered("node-a", tombstones(OLD, ID), "node-b", tombstones(YOUNG, ID)), Set.of("node-c"), on(ID, "node-a"), List.of()),
                new Row("forgotten, but another named node is silent: kept",
                        answered("node-a", tombstones(OLD, ID)), Set.of("node-c"), List.of(), List.of()),
                new Row("two forgotten, the one left answered: they go",
                        answered("node-a", tombstones(OLD, ID)), Set.of("node-b", "node-c"), on(ID, "node-a"), List.of()),
                new Row("forgotten, but an answering node still holds a state of it: swept first, kept",
                        answered("node-a", tombstones(OLD, ID), "node-b", new Sweep.Listing(Set.of(ID), Map.of())), Set.of("node-c"),
                        List.of(), on(ID, "node-b")),
                new Row("a forgotten node outside the set counts for nothing",
                        answered("node-a", tombstones(OLD, ID), "node-b", tombstones(OLD, ID)), Set.of("node-d"), List.of(), List.of()),
                new Row("two volumes: only the one naming nothing but answering or forgotten nodes",
                        answered("node-a", tombstones(OLD, ID, PAIR)), Set.of("node-c"), on(PAIR, "node-a"), List.of()),
                new Row("a forgotten node listed as answering (never: its agent is refused) counts once",
                        answered("node-a", tombstones(OLD, ID), "node-c", clean()), Set.of("node-c"), List.of(), List.of()));
        for (Row r : rows) {
            var plan = Sweep.plan(r.answered(), r.forgotten(), NOW, GRACE);
            assertEquals(r.forgets(), plan.forgets(), r.why());
            assertEquals(r.sweeps(), plan.sweeps(), r.why());
        }
    }

    @Test
    void aLiveOrBarelySilentNodeIsNeverForgotten() {
        var live = List.of(new LostNodes.Seen("node-c", "127.0.0.1:7001", true, Duration.ZERO),
                new LostNodes.Seen("node-a", "127.0.0.1:7002", true, Duration.ZERO));
        var refused = assertThrows(DomainException.class, () -> LostNodes.checkForgettable("node-c", live, DELAY));
        assertEquals(DomainException.Kind.PRECONDITION, refused.kind());
        assertTrue(refused.getMessage().contains("node 'node-c' answers"), refused.getMessage());

        var recent = List.of(new LostNodes.Seen("node-c", "127.0.0.1:7001", false, Duration.ofSeconds(29)));
        var early = assertThrows(DomainException.class, () -> LostNodes.checkForgettable("node-c", recent, DELAY));
        assertEquals(DomainException.Kind.PRECONDITION, early.kind());
        assertTrue(early.getMessage().contains("node 'node-c' has been silent for 29s only"), early.getMessage());

        // a second agent claiming the node (two addresses): any answering one refuses
        var twoAgents = List.of(new LostNodes.Seen("node-c", "127.0.0.1:7001", false, Duration.ofHours(1)),
                new LostNodes.Seen("node-c", "127.0.0.1:7003", true, Duration.ZERO));
        assertThrows(DomainException.class, () -> LostNodes.checkForgettable("node-c", twoAgents, DELAY));

        assertDoesNotThrow(() -> LostNodes.checkForgettable("node-c",
                List.of(new LostNodes.Seen("node-c", "127.0.0.1:7001", false, DELAY)), DELAY), "silent for the delay");
        assertDoesNotThrow(() -> LostNodes.checkForgettable("node-x", live, DELAY), "no agent ever said it is node-x");
        assertEquals(DomainException.Kind.INVALID, assertThrows(DomainException.class,
                () -> LostNodes.checkForgettable("", live, DELAY)).kind());
    }

    @Test
    void aNodeThatMayHoldTheOnlyPrimaryOfALiveVolumeIsNotForgotten() {
        String other = ReplicatedVolumeId.generate(List.of("node-a", "node-b")).toString();
        var withoutC = List.of(new LostNodes.Copy(ID, "SECONDARY", 1), new LostNodes.Copy(ID, "SECONDARY", 1));
        assertEquals(List.of(ID), LostNodes.withoutPrimary("node-c", withoutC, Set.of()), "c may hold its primary");
        assertEquals(List.of(), LostNodes.withoutPrimary("node-c", withoutC, Set.of(ID)), "deleted (a tombstone): nothing to protect");
        assertEquals(List.of(), LostNodes.withoutPrimary("node-c", List.of(new LostNodes.Copy(ID, "PRIMARY", 2),
                new LostNodes.Copy(ID, "SECONDARY", 2)), Set.of()), "failed over: the primary answers");
        assertEquals(List.of(ID), LostNodes.withoutPrimary("node-c", List.of(new LostNodes.Copy(ID, "PRIMARY", 1),
                new LostNodes.Copy(ID, "FENCED", 2)), Set.of()), "a superseded primary is not the primary");
        assertEquals(List.of(ID), LostNodes.withoutPrimary("node-c", List.of(new LostNodes.Copy(ID, "SECONDARY", 2)), Set.of()),
                "a handoff to c in progress (no primary at the highest epoch)");
        assertEquals(List.of(), LostNodes.withoutPrimary("node-c", List.of(new LostNodes.Copy(other, "SECONDARY", 1)), Set.of()),
                "a volume not naming c");
        var refused = assertThrows(DomainException.class, () -> LostNodes.checkNoPrimaryThere("node-c", List.of(ID)));
        assertEquals(DomainException.Kind.PRECONDITION, refused.kind());
        assertTrue(refused.getMessage().startsWith("node 'node-c' may hold the primary of 1 replicated volume(s) [" + ID + "]"),
                refused.getMessage());
        assertDoesNotThrow(() -> LostNodes.checkNoPrimaryThere("node-c", List.of()));
    }

    @Test
    void theMarksAreTheUnionOfTheAgentsAndEachAgentIsToldWhatItLacks() {
        Instant early = NOW.minusSeconds(100);
        var union = LostNodes.union(List.of(Map.of("node-c", NOW), Map.of("node-c", early, "node-d", NOW), Map.of()));
        assertEquals(Map.of("node-c", early, "node-d", NOW), union, "the earliest time of each");
        assertEquals(Map.of("node-d", NOW), LostNodes.missing("node-a", Map.of("node-c", NOW), union));
        assertEquals(Map.of(), LostNodes.missing("node-a", union, union));
        assertEquals(Map.of("node-c", early), LostNodes.missing("node-d", Map.of(), union), "never told its own node");
        assertNull(LostNodes.refusal("node-a", union));
        assertTrue(LostNodes.refusal("node-c", union).contains("node 'node-c' was forgotten"));
    }
}
