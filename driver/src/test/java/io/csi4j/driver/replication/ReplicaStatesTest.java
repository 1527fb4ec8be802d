package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.replication.ReplicaState.Role;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReplicaStatesTest {
    private static final ReplicatedVolumeId ID = ReplicatedVolumeId.generate(List.of("node-a", "node-b"));

    @TempDir Path dir;

    @Test
    void stateIsOneFilePerVolumeAndSurvivesAReopen() throws Exception {
        var states = new ReplicaStates(dir);
        assertEquals(Optional.empty(), states.get(ID));
        states.create(ID, new ReplicaState(1, Role.PRIMARY, ""));
        states.holding(ID, "rpt-1");
        Path file = dir.resolve(ID + ".json");
        assertTrue(Files.readString(file).contains("\"PRIMARY\""), Files.readString(file));
        Files.writeString(dir.resolve(ID + ".json.tmp"), "half a write");          // a crash mid-write
        var reopened = new ReplicaStates(dir);
        assertEquals(Optional.of(new ReplicaState(1, Role.PRIMARY, "rpt-1")), reopened.get(ID));
        try (var files = Files.list(dir)) {
            assertEquals(List.of(file), files.toList(), "the temporary file is swept");
        }
        reopened.delete(ID);
        assertEquals(Optional.empty(), reopened.get(ID));
    }

    /** Volumes made and deleted over an agent's life leave no lock behind (each id's entries went with its use). */
    @Test
    void createAndDeleteCyclesKeepNoLocks() {
        var states = new ReplicaStates(dir);
        for (int i = 0; i < 50; i++) {
            var id = ReplicatedVolumeId.generate(List.of("node-a", "node-b"));
            states.create(id, new ReplicaState(1, Role.SECONDARY, ""));
            states.exclusively(id, () -> states.holding(id, "rpt-" + id));     // a round: the replication lock, then the state's
            states.markDeleted(id, java.time.Instant.ofEpochSecond(1_700_000_000L + i));
            states.delete(id);
            states.forgetDeleted(id);
            assertEquals(0, states.lockEntries(), "after cycle " + i);
        }
        assertEquals(List.of(), states.ids());
    }

    @Test
    void aHandoffRaisesTheEpochAndEveryStepIsIdempotent() {
        var a = new ReplicaStates(dir.resolve("a"));
        var b = new ReplicaStates(dir.resolve("b"));
        a.create(ID, new ReplicaState(1, Role.PRIMARY, ""));
        b.create(ID, new ReplicaState(1, Role.SECONDARY, ""));
        assertEquals(new ReplicaState(1, Role.SECONDARY, ""), b.create(ID, new ReplicaState(1, Role.SECONDARY, "")));
        a.checkWritable(ID.toString());
        refused(DomainException.Kind.PRECONDITION, () -> b.checkWritable(ID.toString()));

        // the old primary steps down first, then the new one is promoted: never two writable copies
        assertEquals(new ReplicaState(2, Role.SECONDARY, "", "node-b"), a.demote(ID, 2, "node-b"));
        assertEquals(new ReplicaState(2, Role.SECONDARY, "", "node-b"), a.demote(ID, 2, "node-b"));   // retried
        // a second decider cannot hand the same epoch to another node
        var other = refused(DomainException.Kind.PRECONDITION, () -> a.demote(ID, 2, "node-c"));
        assertTrue(other.getMessage().contains("handed to node 'node-b' at epoch 2"), other.getMessage());
        assertEquals("node-b", new ReplicaStates(dir.resolve("a")).get(ID).orElseThrow().successor(), "durable");
        refused(DomainException.Kind.PRECONDITION, () -> a.checkWritable(ID.toString()));
        assertEquals(new ReplicaState(2, Role.PRIMARY, ""), b.promote(ID, 2));
        assertEquals(new ReplicaState(2, Role.PRIMARY, ""), b.promote(ID, 2));          // retried
        b.checkWritable(ID.toString());
        // a node that knows epoch 2 can never become its primary: one primary per epoch
        refused(DomainException.Kind.PRECONDITION, () -> a.promote(ID, 2));
        refused(DomainException.Kind.PRECONDITION, () -> b.demote(ID, 2, "node-a"));
        refused(DomainException.Kind.PRECONDITION, () -> b.demote(ID, 1, "node-a"));
        assertEquals(Role.PRIMARY, a.promote(ID, 3).role());
    }

    @Test
    void aFailoverPromotesAHeldPointAboveEveryKnownEpochAndKeepsItsNote() {
        var b = new ReplicaStates(dir);
        b.create(ID, new ReplicaState(1, Role.SECONDARY, ""));
        var nothing = refused(DomainException.Kind.PRECONDITION, () -> b.failover(ID, 2, "note"));
        assertTrue(nothing.getMessage().contains("no complete point"), nothing.getMessage());
        b.holding(ID, "rpt-7");
        refused(DomainException.Kind.PRECONDITION, () -> b.failover(ID, 1, "note"));      // not above what it knows
        var promoted = new ReplicaState(2, Role.PRIMARY, "rpt-7", "", "failed over from rpt-7");
        assertEquals(promoted, b.failover(ID, 2, "failed over from rpt-7"));
        assertEquals(promoted, b.failover(ID, 2, "a retry"));                               // retried: unchanged
        assertEquals(Optional.of(promoted), new ReplicaStates(dir).get(ID), "durable, note included");
        b.checkWritable(ID.toString());
        // a primary fails nothing over; a later handoff's promotion clears the note
        refused(DomainException.Kind.PRECONDITION, () -> b.failover(ID, 3, "again"));
    }

    /**
     * A handoff past silent nodes: the promoted copy keeps the list the controller carried, durably, until its next role
     * change (docs/replication.md, "A handoff past a node failed over from"). A state file written before the field
     * reads as carrying nothing.
     */
    @Test
    void aHandoffPastSilentNodesCarriesTheirListDurablyUntilTheNextRoleChange() throws Exception {
        var c = new ReplicaStates(dir);
        c.create(ID, new ReplicaState(2, Role.SECONDARY, "rpt-3"));
        var promoted = new ReplicaState(3, Role.PRIMARY, "rpt-3", "", "", "node-a");
        assertEquals(promoted, c.promote(ID, 3, "node-a"));
        assertEquals(promoted, c.promote(ID, 3, "node-x"));                      // retried: unchanged
        assertEquals(Optional.of(promoted), new ReplicaStates(dir).get(ID), "durable, the list included");
        assertEquals(promoted.holding("rpt-4"), c.holding(ID, "rpt-4"), "a new point keeps it");
        assertEquals("", c.demote(ID, 4, "node-b").replaced(), "stepped down: the list goes with the primary");
        assertEquals("", c.learnEpoch(ID, 5).replaced());
        Path file = dir.resolve(ID + ".json");
        assertTrue(Files.readString(file).contains("\"replaced\":\"\""), Files.readString(file));
        Files.writeString(file, "{\"epoch\":\"6\",\"role\":\"PRIMARY\",\"point\":\"p\",\"successor\":\"\",\"failover\":\"\"}\n");
        assertEquals(Optional.of(new ReplicaState(6, Role.PRIMARY, "p")), new ReplicaStates(dir).get(ID), "an older agent's file");
    }

    @Test
    void aSupersededCopyIsFencedDurablyAndRefusesWrites() {
        var a = new ReplicaStates(dir);
        a.create(ID, new ReplicaState(1, Role.PRIMARY, "rpt-7"));
        assertEquals(new ReplicaState(1, Role.PRIMARY, "rpt-7"), a.learnEpoch(ID, 1));   // nothing newer
        assertEquals(new ReplicaState(2, Role.FENCED, "rpt-7"), a.learnEpoch(ID, 2));
        var afterRestart = new ReplicaStates(dir);
        assertEquals(Role.FENCED, afterRestart.get(ID).orElseThrow().role());
        var e = refused(DomainException.Kind.PRECONDITION, () -> afterRestart.checkWritable(ID.toString()));
        assertTrue(e.getMessage().contains("FENCED") && e.getMessage().contains("epoch 2"), e.getMessage());
        refused(DomainException.Kind.PRECONDITION, () -> afterRestart.promote(ID, 2));
        // never the source of a handoff (its image took writes no primary has): it follows the primary instead (review s10, F2)
        refused(DomainException.Kind.PRECONDITION, () -> afterRestart.demote(ID, 2, "node-b"));
        assertEquals(new ReplicaState(2, Role.SECONDARY, ""), afterRestart.follow(ID, 2));
    }

    /** Table of {@link ReplicaStates#follow}: from each state, following epoch 3. */
    @Test
    void aCopyBehindTheNewPrimaryFollowsItsEpoch() {
        record Row(ReplicaState from, ReplicaState to) {}
        var rows = List.of(
                // a secondary of an older epoch (the other secondary after a failover): up, keeping its point
                new Row(new ReplicaState(1, Role.SECONDARY, "rpt-7"), new ReplicaState(3, Role.SECONDARY, "rpt-7")),
                new Row(new ReplicaState(1, Role.SECONDARY, ""), new ReplicaState(3, Role.SECONDARY, "")),
                // an old primary that handed over at 2 (its successor named there): a secondary of 3, no successor
                new Row(new ReplicaState(2, Role.SECONDARY, "rpt-7", "node-b"), new ReplicaState(3, Role.SECONDARY, "rpt-7")),
                // already there: unchanged
                new Row(new ReplicaState(3, Role.SECONDARY, "rpt-9"), new ReplicaState(3, Role.SECONDARY, "rpt-9")),
                // a fenced copy (at the epoch it learnt, or below): a secondary holding no point (its writes go)
                new Row(new ReplicaState(3, Role.FENCED, "rpt-7"), new ReplicaState(3, Role.SECONDARY, "")),
                new Row(new ReplicaState(2, Role.FENCED, "rpt-7"), new ReplicaState(3, Role.SECONDARY, "")),
                // the old primary of the handoff to epoch 3 itself: already a secondary of it, unchanged
                new Row(new ReplicaState(3, Role.SECONDARY, "rpt-7", "node-b"), new ReplicaState(3, Role.SECONDARY, "rpt-7", "node-b")),
                // refused: a primary (a fence or a handoff ends it), an epoch above
                new Row(new ReplicaState(1, Role.PRIMARY, "rpt-7"), null),
                new Row(new ReplicaState(3, Role.PRIMARY, "rpt-7"), null),
                new Row(new ReplicaState(4, Role.SECONDARY, "rpt-7"), null),
                new Row(new ReplicaState(4, Role.FENCED, "rpt-7"), null));
        int i = 0;
        for (Row row : rows) {
            var states = new ReplicaStates(dir.resolve("row" + i++));
            states.create(ID, row.from());
            if (row.to() == null) {
                refused(DomainException.Kind.PRECONDITION, () -> states.follow(ID, 3));
                assertEquals(row.from(), states.get(ID).orElseThrow(), "unchanged: " + row);
            } else {
                assertEquals(row.to(), states.follow(ID, 3), row.toString());
                assertEquals(row.to(), states.follow(ID, 3), "idempotent: " + row);
                assertEquals(Optional.of(row.to()), new ReplicaStates(dir.resolve("row" + (i - 1))).get(ID),
                        "durable: " + row);
                refused(DomainException.Kind.PRECONDITION, () -> states.checkWritable(ID.toString()));
            }
        }
        // a fenced copy that followed holds no point: nothing to fail over to until its first round
        var fenced = new ReplicaStates(dir.resolve("fenced"));
        fenced.create(ID, new ReplicaState(2, Role.FENCED, "rpt-7"));
        fenced.follow(ID, 2);
        var none = refused(DomainException.Kind.PRECONDITION, () -> fenced.failover(ID, 3, "note"));
        assertTrue(none.getMessage().contains("no complete point"), none.getMessage());
    }

    @Test
    void anOrdinaryVolumeIsNotTheirBusinessAndAMissingReplicaIsNotFound() {
        var states = new ReplicaStates(dir);
        states.checkWritable("vol-aaaaaaaaaaaaaaaa-node-a");
        refused(DomainException.Kind.NOT_FOUND, () -> states.checkWritable(ID.toString()));
        refused(DomainException.Kind.NOT_FOUND, () -> states.promote(ID, 2));
    }

    private static DomainException refused(DomainException.Kind kind, Runnable call) {
        var e = assertThrows(DomainException.class, call::run);
        assertEquals(kind, e.kind(), e.getMessage());
        return e;
    }
}
