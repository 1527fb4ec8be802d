package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.MemoryPool;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.snapshot.Snapshots;
import io.csi4j.driver.volume.AccessMode;
import io.csi4j.driver.volume.CapacityRange;
import io.csi4j.driver.volume.Capability;
import io.csi4j.driver.volume.NewVolume;
import io.csi4j.driver.volume.Volumes;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@link Rounds} remembers of a volume in memory (when each copy last tried a round, its failures in a row, when
 * this agent first saw it primary at its epoch) goes with the volume's replica here: {@link Rounds#delete} forgets it,
 * and a listing forgets a volume whose state file is gone (a delete that raced a listing or a lag look, which
 * remembered it again after the delete forgot it). Without it, an agent that lives through many volumes keeps an entry
 * of each. No root: the pool is in memory; catalog, states and domain code are the real ones.
 */
class ForgetDeletedVolumeTest {
    private static final String NODE = "node-a";

    @TempDir
    Path dir;

    private Catalog catalog;
    private Volumes volumes;
    private ReplicaStates states;
    private Rounds rounds;

    @BeforeEach
    void agent() {
        catalog = Catalog.openIn(dir);
        var pool = new MemoryPool(1L << 30);
        DriverConfig config = DriverConfig.defaults(dir, NODE);
        volumes = new Volumes(catalog, pool, config, InstantSource.system());
        Snapshots snapshots = new Snapshots(catalog, pool, volumes, config, InstantSource.system());
        states = new ReplicaStates(dir.resolve(ReplicaStates.DIRECTORY));
        rounds = new Rounds(states, volumes, snapshots, null, pool, NODE);
    }

    @AfterEach
    void close() {
        catalog.close();
    }

    private ReplicatedVolumeId primaryHere(String name) {
        ReplicatedVolumeId id = ReplicatedVolumeId.generate(List.of(NODE, "node-b", "node-c"));
        states.create(id, new ReplicaState(1, ReplicaState.Role.PRIMARY, ""));
        volumes.creation().createReplica(new NewVolume(name, new CapacityRange(64L << 20, 0),
                List.of(Capability.mount(AccessMode.SINGLE_NODE_WRITER, "ext4")), Map.of(), Map.of(), ContentSource.NONE, Optional.empty()), id);
        return id;
    }

    /** Everything Rounds remembers of a volume: its lag count's start, when it was listed, a failed pull. */
    private void remembered(ReplicatedVolumeId id) {
        assertEquals(Optional.empty(), rounds.lagCondition(id.toString()), "a primary just seen is not behind");
        rounds.list();
        assertThrows(DomainException.class, () -> rounds.pull(id, null, 0), "a primary does not pull");
        assertTrue(rounds.remembered().contains(id.toString()), "remembered: " + rounds.remembered());
    }

    @Test
    void aDeletedReplicaIsForgotten() {
        ReplicatedVolumeId gone = primaryHere("pvc-1");
        ReplicatedVolumeId stays = primaryHere("pvc-2");
        remembered(gone);
        remembered(stays);
        rounds.delete(gone, false);
        assertEquals(Set.of(stays.toString()), rounds.remembered());
    }

    @Test
    void aStateGoneWhileRememberedIsForgottenAtTheNextListing() {
        ReplicatedVolumeId raced = primaryHere("pvc-1");
        ReplicatedVolumeId stays = primaryHere("pvc-2");
        remembered(raced);
        remembered(stays);
        states.delete(raced);                        // what Rounds.delete leaves when a listing re-remembered the volume after it
        rounds.list();
        assertEquals(Set.of(stays.toString()), rounds.remembered());
    }
}
