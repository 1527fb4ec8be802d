package io.csi4j.driver.mobility;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.driver.engine.Replica;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The base of a resync by checksums is the replica kept last, whatever its id says. */
class NewestReplicaTest {
    static final String VOLUME = "vol-abcdefghijklmnop-node-a";
    static final Instant T = Instant.parse("2026-11-27T14:00:00Z");

    static NewestReplica.Kept kept(String snapshotId, long second) {
        return new NewestReplica.Kept(new Replica(VOLUME, snapshotId), T.plusSeconds(second));
    }

    @Test
    void theReplicaKeptLastWins() {
        record Row(String what, List<NewestReplica.Kept> held, String expected) {}
        for (Row row : List.of(
                new Row("none: no base", List.of(), null),
                new Row("one replica", List.of(kept("snap-zzzzzzzzzzzzzzzz-node-b", 5)), "snap-zzzzzzzzzzzzzzzz-node-b"),
                // the old rule (ids compared as strings, the greatest taken) picked -9 here: "-9" > "-10" as text
                new Row("...-9 kept before ...-10", List.of(kept("snap-aaaaaaaaaaaaaaaa-node-9", 1), kept("snap-aaaaaaaaaaaaaaaa-node-10", 2)),
                        "snap-aaaaaaaaaaaaaaaa-node-10"),
                new Row("...-10 kept before ...-9", List.of(kept("snap-aaaaaaaaaaaaaaaa-node-10", 1), kept("snap-aaaaaaaaaaaaaaaa-node-9", 2)),
                        "snap-aaaaaaaaaaaaaaaa-node-9"),
                // points of two primaries (a failover between): the random part orders nothing
                new Row("points of two primaries, the smaller id newer", List.of(kept("snap-zzzzzzzzzzzzzzzz-node-a", 10),
                        kept("snap-bbbbbbbbbbbbbbbb-node-b", 20)), "snap-bbbbbbbbbbbbbbbb-node-b"),
                new Row("points of two primaries, listed newest first", List.of(kept("snap-bbbbbbbbbbbbbbbb-node-b", 20),
                        kept("snap-zzzzzzzzzzzzzzzz-node-a", 10)), "snap-bbbbbbbbbbbbbbbb-node-b"),
                // an id not of a point's shape (a replica of a user snapshot kept by a restore) is ordered the same way
                new Row("an id not of a point's shape", List.of(kept("snap-cccccccccccccccc-node-a", 3), kept("restored-1", 4)), "restored-1"),
                new Row("kept at the same instant: the greater id, whatever the order listed",
                        List.of(kept("snap-dddddddddddddddd-node-a", 7), kept("snap-eeeeeeeeeeeeeeee-node-a", 7)), "snap-eeeeeeeeeeeeeeee-node-a"),
                new Row("kept at the same instant, listed the other way",
                        List.of(kept("snap-eeeeeeeeeeeeeeee-node-a", 7), kept("snap-dddddddddddddddd-node-a", 7)), "snap-eeeeeeeeeeeeeeee-node-a"))) {
            assertEquals(Optional.ofNullable(row.expected()), NewestReplica.of(row.held()).map(Replica::snapshotId), row.what());
        }
    }
}
