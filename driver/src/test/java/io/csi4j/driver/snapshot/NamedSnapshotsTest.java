package io.csi4j.driver.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.catalog.CatalogTransaction;
import io.csi4j.driver.engine.MemoryPool;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.model.GroupSnapshotRecord;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.State;
import io.csi4j.driver.volume.Volumes;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Snapshots#namedOfReplicated} (behind NodeAgent.ListNamedSnapshots, the controller's duplicate sweep) is one
 * query filtered in the database: over a catalog file in a temp dir holding rows it must and must not return (other
 * states, ordinary and look-alike sources, points, group members), its answer is exactly the rows it must return, in
 * insertion order, with their fields as stored (the sweep reads name, id, source and updatedAt).
 */
class NamedSnapshotsTest {
    private static final Instant T0 = Instant.parse("2026-11-27T17:00:00.123456789Z");
    /** Rounds of the row mix below: past 1000 rows, the old Java filter's page size. */
    private static final int ROUNDS = 200;

    @TempDir
    Path dir;

    @Test
    void answersExactlyTheReadyNamedSnapshotsOfReplicatedVolumes() {
        try (Catalog catalog = Catalog.openIn(dir)) {
            DriverConfig config = DriverConfig.defaults(dir, "node-a");
            MemoryPool pool = new MemoryPool(1L << 30);
            Snapshots snapshots = new Snapshots(catalog, pool, new Volumes(catalog, pool, config, InstantSource.system()),
                    config, InstantSource.system());
            List<SnapshotRecord> expected = catalog.inTransaction(this::fill);

            List<SnapshotRecord> named = snapshots.namedOfReplicated();

            assertEquals(ROUNDS * 4, expected.size());
            assertEquals(ROUNDS * 13, catalog.snapshots().count());
            assertEquals(expected, named);
        }
    }

    /** Inserts {@link #ROUNDS} rounds of 13 rows; returns the 4 per round the sweep must see, in insertion order. */
    private List<SnapshotRecord> fill(CatalogTransaction tx) {
        GroupSnapshotRecord group = new GroupSnapshotRecord("group-1", "gs-1", List.of(), Map.of(), State.READY, T0, T0);
        tx.groupSnapshots().insert(group);
        List<SnapshotRecord> wanted = new ArrayList<>();
        long[] n = {0};
        for (int r = 0; r < ROUNDS; r++) {
            String replicated = ReplicatedVolumeId.generate(List.of("node-a", "node-b")).toString();
            String hashed = ReplicatedVolumeId.generate(List.of("Node_A", "node-b", "Node_C")).toString();
            String ordinary = ObjectId.generate(ObjectId.Kind.VOLUME, "node-a").toString();
            String ordinaryHashed = ObjectId.generate(ObjectId.Kind.VOLUME, "Node_A").toString();
            String twiceOneNode = "vol-" + ObjectId.generate(ObjectId.Kind.VOLUME, "x").random() + "-node-a__node-a";
            assertTrue(ReplicatedVolumeId.isReplicated(hashed) && hashed.contains("_"), hashed);
            assertFalse(ReplicatedVolumeId.isReplicated(twiceOneNode), twiceOneNode);
            assertTrue(ordinaryHashed.contains("-_"), ordinaryHashed);
            record Row(String name, String source, State state, String group, boolean wanted) {}
            List<Row> rows = List.of(
                    new Row("snap-" + r, replicated, State.READY, null, true),
                    new Row("snap-hashed-" + r, hashed, State.READY, null, true),
                    new Row("CSI4J-POINT-" + r, replicated, State.READY, null, true),        // a CO's name: case counts
                    new Row("x" + SnapshotRecord.POINT_PREFIX + r, replicated, State.READY, null, true),
                    new Row(SnapshotRecord.POINT_PREFIX + replicated + "-node-b-" + r, replicated, State.READY, null, false),
                    new Row("creating-" + r, replicated, State.CREATING, null, false),
                    new Row("deleting-" + r, replicated, State.DELETING, null, false),
                    new Row("ordinary-" + r, ordinary, State.READY, null, false),
                    new Row("ordinary-hashed-" + r, ordinaryHashed, State.READY, null, false),
                    new Row("twice-one-node-" + r, twiceOneNode, State.READY, null, false),
                    new Row("look-alike-" + r, "vol-abc__def", State.READY, null, false),
                    new Row("member-" + r, replicated, State.READY, group.id(), false),
                    new Row(null, replicated, State.READY, group.id(), false));
            for (Row row : rows) {
                Instant at = T0.plusNanos(++n[0]);
                var s = new SnapshotRecord(ObjectId.generate(ObjectId.Kind.SNAPSHOT, "node-a").toString(), row.name(),
                        row.source(), n[0], row.group(), Map.of(), row.state(), at, at.plusSeconds(1));
                tx.snapshots().insert(s);
                if (row.wanted()) wanted.add(s);
            }
        }
        return wanted;
    }
}
