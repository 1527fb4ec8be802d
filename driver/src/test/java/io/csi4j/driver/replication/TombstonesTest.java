package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.replication.ReplicaState.Role;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A replica node's durable memory of a delete a peer did not answer (docs/replication.md, "Deletion"). */
class TombstonesTest {
    private static final ReplicatedVolumeId ID = ReplicatedVolumeId.generate(List.of("node-a", "node-b"));
    private static final ReplicatedVolumeId OTHER = ReplicatedVolumeId.generate(List.of("node-a", "node-c"));

    @TempDir Path dir;

    @Test
    void aTombstoneIsDurableSeparateFromTheStateAndKeepsItsFirstTime() throws Exception {
        var states = new ReplicaStates(dir);
        states.create(ID, new ReplicaState(1, Role.PRIMARY, ""));
        states.create(OTHER, new ReplicaState(1, Role.SECONDARY, ""));
        Instant first = Instant.ofEpochSecond(1_800_000_000L);
        states.markDeleted(ID, first);
        states.markDeleted(ID, first.plusSeconds(60));                   // a retried delete: the first time stays
        states.delete(ID);
        Files.writeString(dir.resolve(OTHER + ".deleted.tmp"), "half");   // a crash mid-write of another tombstone

        var reopened = new ReplicaStates(dir);
        assertEquals(Optional.of(first), reopened.deleted(ID));
        assertEquals(Map.of(ID, first), reopened.tombstones(), "the half-written one is gone, not a tombstone");
        assertEquals(List.of(OTHER), reopened.ids(), "a tombstone is not a replica state");
        assertEquals(Optional.empty(), reopened.deleted(OTHER));
    }

    @Test
    void aTombstonedIdIsNeverMadeAgainUntilForgotten() {
        var states = new ReplicaStates(dir);
        states.markDeleted(ID, Instant.now());
        var refused = assertThrows(DomainException.class, () -> states.create(ID, new ReplicaState(1, Role.SECONDARY, "")));
        assertEquals(DomainException.Kind.ABORTED, refused.kind(), refused.getMessage());
        assertEquals(Optional.empty(), states.get(ID), "nothing was written");
        states.forgetDeleted(ID);
        states.forgetDeleted(ID);                                         // idempotent
        assertEquals(Map.of(), states.tombstones());
        try (var files = Files.list(dir)) {
            assertEquals(List.of(), files.toList());
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }
}
