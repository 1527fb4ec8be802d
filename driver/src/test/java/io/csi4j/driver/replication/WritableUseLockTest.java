package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.MemoryPool;
import io.csi4j.driver.engine.NodeStorage;
import io.csi4j.driver.engine.PublishOptions;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.engine.VolumeStats;
import io.csi4j.driver.engine.WriteFence;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.node.NodeVolumes;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review 2026-11-27 s10, F1: a writable NodeStage checks the copy's role and then mounts it; a DemoteReplica (the first
 * step of a handoff, which refuses while the copy is in use) or a FenceReplica (which makes the mounts read-only after
 * the state) running between the two left a demoted or fenced copy mounted writable: writes after a handoff's final
 * point, or a fenced copy taking writes. Here the stage is held inside its mount (a node side that waits for the test)
 * while the demote or fence runs: each must wait for the mount and then see it. No root: the pool is in memory, the
 * catalog, the replication states and the domain code are the real ones.
 */
class WritableUseLockTest {
    private static final String NODE = "node-a";
    private static final ReplicatedVolumeId ID = ReplicatedVolumeId.generate(List.of(NODE, "node-b"));
    private static final Capability WRITER = Capability.mount(AccessMode.SINGLE_NODE_WRITER, "ext4");

    @TempDir
    Path dir;

    private Catalog catalog;
    private MemoryPool pool;
    private ReplicaStates states;
    private NodeVolumes node;
    private Rounds rounds;
    private final CountDownLatch mounting = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    /** For each stopWrites: whether the volume was mounted when it ran. */
    private final List<Boolean> stopsSawAMount = new CopyOnWriteArrayList<>();

    @BeforeEach
    void agent() {
        catalog = Catalog.openIn(dir);
        pool = new MemoryPool(1L << 30);
        pool.offer(new HeldStage()).offer((WriteFence) volumeId -> {
            stopsSawAMount.add(pool.inUse(volumeId));
            return List.of();
        });
        DriverConfig config = DriverConfig.defaults(dir, NODE);
        Volumes volumes = new Volumes(catalog, pool, config, InstantSource.system());
        Snapshots snapshots = new Snapshots(catalog, pool, volumes, config, InstantSource.system());
        states = new ReplicaStates(dir.resolve(ReplicaStates.DIRECTORY));
        states.create(ID, new ReplicaState(1, ReplicaState.Role.PRIMARY, ""));           // confirmed by the act
        volumes.creation().createReplica(new NewVolume("pvc-1", new CapacityRange(64L << 20, 0), List.of(WRITER), Map.of(), Map.of(),
                ContentSource.NONE, Optional.empty()), ID);
        node = new NodeVolumes(catalog, pool, volumes, config, states);
        rounds = new Rounds(states, volumes, snapshots, null, pool, NODE);
    }

    /** A writable NodeStage, started and held at its mount (the engine waits for {@code release}). */
    private Call stageHeldAtItsMount() throws Exception {
        var stage = run(() -> {
            node.stage(ID.toString(), dir.resolve("staging"), WRITER);
            return null;
        });
        assertTrue(mounting.await(30, TimeUnit.SECONDS), "the stage reached its mount");
        return stage;
    }

    @AfterEach
    void close() {
        release.countDown();
        catalog.close();
    }

    @Test
    void aDemoteWaitsForAWritableStageInProgressAndThenRefusesTheStagedCopy() throws Exception {
        var stage = stageHeldAtItsMount();
        var demote = run(() -> rounds.demote(ID, 2, "node-b"));
        demote.waitUntilDoneOrParked();
        release.countDown();
        stage.join();
        demote.join();

        assertNull(stage.failure.get(), "the stage itself goes through");
        assertTrue(pool.inUse(ID.toString()), "mounted");
        var refused = demote.failure.get();
        assertTrue(refused instanceof DomainException d && d.kind() == DomainException.Kind.PRECONDITION
                && d.getMessage().contains("still staged"), "the demote must see the mount and refuse: " + refused);
        assertEquals(new ReplicaState(1, ReplicaState.Role.PRIMARY, ""), states.get(ID).orElseThrow(),
                "a mounted copy never becomes a secondary: its writes would come after the handoff's final point");
    }

    @Test
    void aFenceWaitsForAWritableStageInProgressAndThenStopsItsWrites() throws Exception {
        var stage = stageHeldAtItsMount();
        var fence = run(() -> rounds.fence(ID, 2));
        fence.waitUntilDoneOrParked();
        release.countDown();
        stage.join();
        fence.join();

        assertNull(fence.failure.get(), "the fence answers");
        assertEquals(ReplicaState.Role.FENCED, states.get(ID).orElseThrow().role());
        assertTrue(pool.inUse(ID.toString()), "mounted");
        assertEquals(List.of(true), stopsSawAMount, "the fence's write stop ran once, after the mount existed: a fenced copy"
                + " is never left mounted writable");
        // and from now on a writable stage is refused
        var again = run(() -> {
            node.stage(ID.toString(), dir.resolve("staging-2"), WRITER);
            return null;
        });
        again.join();
        assertTrue(again.failure.get() instanceof DomainException d && d.kind() == DomainException.Kind.PRECONDITION,
                "a fenced copy refuses a writable stage: " + again.failure.get());
    }

    /** The node side: a stage attaches (in use) only once the test lets it, after it told the test it is mounting. */
    private final class HeldStage implements NodeStorage {
        @Override
        public void stage(String volumeId, Path stagingPath, StageOptions options) {
            mounting.countDown();
            try {
                if (!release.await(60, TimeUnit.SECONDS)) throw new IllegalStateException("never released");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            pool.attach(volumeId, true);
        }

        @Override public void unstage(String volumeId, Path stagingPath) { pool.attach(volumeId, false); }
        @Override public void publish(String volumeId, Path stagingPath, Path targetPath, PublishOptions options) { }
        @Override public void unpublish(String volumeId, Path targetPath) { }
        @Override public List<Path> mountPoints(String volumeId) { return List.of(); }
        @Override public VolumeStats stats(String volumeId, Path volumePath) { throw new UnsupportedOperationException(); }
        @Override public long nodeExpand(String volumeId, Path volumePath) { throw new UnsupportedOperationException(); }
    }

    /** A call on its own virtual thread, and how it ended. */
    private static final class Call {
        final Thread thread;
        final AtomicReference<Throwable> failure = new AtomicReference<>();

        Call(Supplier<?> work) {
            thread = Thread.ofVirtual().start(() -> {
                try {
                    work.get();
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
        }

        /** Until it ended, or parked (waiting for a lock): bounded, generous for a loaded machine. */
        void waitUntilDoneOrParked() throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (thread.isAlive() && thread.getState() != Thread.State.WAITING && System.nanoTime() < end) Thread.sleep(10);
        }

        void join() throws InterruptedException {
            assertTrue(thread.join(java.time.Duration.ofSeconds(60)), "ended");
        }
    }

    private static Call run(Supplier<?> work) {
        return new Call(work);
    }
}
