package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.ImageImport;
import io.csi4j.driver.engine.ImportBase;
import io.csi4j.driver.engine.MemoryPool;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.engine.SourceImage;
import io.csi4j.driver.engine.StillImage;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.snapshot.Snapshots;
import io.csi4j.driver.volume.AccessMode;
import io.csi4j.driver.volume.CapacityRange;
import io.csi4j.driver.volume.Capability;
import io.csi4j.driver.volume.NewVolume;
import io.csi4j.driver.volume.Volumes;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review 2026-11-27 s10, F6: the old primary of a handoff holds the final point it cut itself, with no round of it, and
 * a failover ranks copies by when the point they hold was cut. The agent must know that time for such a point (its
 * snapshot record's creation here), or the old primary ranks oldest and an older copy is failed over to. No root: the
 * pool is in memory (with a data mover that only keeps a snapshot as a replica, what a handoff's final cut asks of it);
 * the catalog, the replication states and the domain code are the real ones.
 */
class HandoffPointCutTest {
    private static final String NODE = "node-a";
    private static final ReplicatedVolumeId ID = ReplicatedVolumeId.generate(List.of(NODE, "node-b", "node-c"));

    @TempDir
    Path dir;

    private Catalog catalog;
    private ReplicaStates states;
    private Rounds rounds;

    @BeforeEach
    void agent() {
        catalog = Catalog.openIn(dir);
        var pool = new MemoryPool(1L << 30).offer(new KeepingMover());
        DriverConfig config = DriverConfig.defaults(dir, NODE);
        Volumes volumes = new Volumes(catalog, pool, config, InstantSource.system());
        Snapshots snapshots = new Snapshots(catalog, pool, volumes, config, InstantSource.system());
        states = new ReplicaStates(dir.resolve(ReplicaStates.DIRECTORY));
        states.create(ID, new ReplicaState(1, ReplicaState.Role.PRIMARY, ""));
        volumes.creation().createReplica(new NewVolume("pvc-1", new CapacityRange(64L << 20, 0),
                List.of(Capability.mount(AccessMode.SINGLE_NODE_WRITER, "ext4")), Map.of(), Map.of(), ContentSource.NONE, Optional.empty()), ID);
        rounds = new Rounds(states, volumes, snapshots, null, pool, NODE);
    }

    @AfterEach
    void close() {
        catalog.close();
    }

    @Test
    void theOldPrimaryReportsWhenItCutTheHandoffsFinalPoint() {
        assertEquals(Optional.empty(), rounds.pointCutAt(ID), "a primary holding no point: nothing to report");
        rounds.demote(ID, 2, "node-b");
        Instant before = Instant.now();
        String finalPoint = rounds.cutPoint(ID, "node-b", "");
        Instant after = Instant.now();
        assertEquals(new ReplicaState(2, ReplicaState.Role.SECONDARY, finalPoint, "node-b"), states.get(ID).orElseThrow());
        assertEquals(Optional.empty(), rounds.lastRound(ID), "the old primary has no round of the point it cut");
        Instant cut = rounds.pointCutAt(ID).orElseThrow(() -> new AssertionError("the final point's cut is not reported"));
        assertFalse(cut.isBefore(before.minusMillis(1)), cut + " before the cut started at " + before);
        assertFalse(cut.isAfter(after), cut + " after the cut ended at " + after);
        // a point this node did not cut (a replica pulled from another node) with no round: unknown, never a guess
        states.holding(ID, "snap-of-another-node");
        assertTrue(rounds.pointCutAt(ID).isEmpty());
    }

    /** Only what a handoff's final cut asks of a data mover: keep the snapshot as the replica its image equals. */
    private static final class KeepingMover implements DataMover {
        private final List<Replica> kept = new CopyOnWriteArrayList<>();

        @Override public boolean keepSnapshotAsReplica(String volumeId, String snapshotId) {
            kept.add(new Replica(volumeId, snapshotId));
            return true;
        }
        @Override public List<Replica> replicas() { return List.copyOf(kept); }
        @Override public void dropReplica(Replica replica) { kept.remove(replica); }
        @Override public void dropReplicas(String sourceVolumeId) { kept.removeIf(r -> r.sourceVolumeId().equals(sourceVolumeId)); }
        @Override public SourceImage openSource(Artifact.Kind kind, String id) { throw new UnsupportedOperationException(); }
        @Override public ImageImport beginImport(String volumeId, long sourceBytes, long capacityBytes, AccessType access, String sourceRef,
                Artifact.Label label, ImportBase base, Replica keepAs) { throw new UnsupportedOperationException(); }
        @Override public Instant keptAt(Replica replica) { throw new UnsupportedOperationException(); }
        @Override public SourceImage openReplica(Replica replica) { throw new UnsupportedOperationException(); }
        @Override public Optional<StillImage> stillImage(String volumeId) { return Optional.empty(); }
    }
}
