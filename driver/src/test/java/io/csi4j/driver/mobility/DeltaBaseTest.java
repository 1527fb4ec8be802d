package io.csi4j.driver.mobility;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.driver.mobility.DeltaBase.OfReplica;
import io.csi4j.driver.mobility.DeltaBase.OfSnapshot;
import io.csi4j.driver.mobility.DeltaBase.Snapshot;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The base a copy is sent against: only ever an id the receiver offers and this node holds of the same volume. */
class DeltaBaseTest {
    static final Snapshot OLD = new Snapshot("s1", Instant.parse("2026-01-01T00:00:00Z"));
    static final Snapshot NEW = new Snapshot("s2", Instant.parse("2026-01-02T00:00:00Z"));

    record Row(String what, List<String> offered, List<Snapshot> here, List<String> replicas, Optional<DeltaBase.Base> expected) {}

    @Test
    void table() {
        var rows = List.of(
                new Row("nothing offered: a full copy", List.of(), List.of(OLD, NEW), List.of("r1"), Optional.empty()),
                new Row("the target itself: nothing to send", List.of("t"), List.of(), List.of(), Optional.of(new OfSnapshot("t"))),
                new Row("the newest offered snapshot here", List.of("s1", "s2"), List.of(OLD, NEW), List.of(), Optional.of(new OfSnapshot("s2"))),
                new Row("an offered snapshot beats a replica", List.of("r1", "s1"), List.of(OLD), List.of("r1"), Optional.of(new OfSnapshot("s1"))),
                new Row("a replica here of the offered id (a handoff's point)", List.of("p"), List.of(), List.of("p"), Optional.of(new OfReplica("p"))),
                new Row("a replica not offered is no base", List.of("x"), List.of(), List.of("p"), Optional.empty()),
                new Row("an offered id held nowhere here: a full copy", List.of("x", "y"), List.of(), List.of(), Optional.empty()));
        for (Row r : rows) {
            // snapshotsHere are those the caller found of the same volume among the offered ids
            var here = r.here().stream().filter(s -> r.offered().contains(s.id())).toList();
            assertEquals(r.expected(), DeltaBase.choose("t", r.offered(), here, r.replicas()), r.what());
        }
    }
}
