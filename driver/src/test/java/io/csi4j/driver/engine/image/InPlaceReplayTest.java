package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.image.InPlaceRoundTest.SIZE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.DataPath;
import io.csi4j.driver.engine.ImageImport;
import io.csi4j.driver.engine.InPlaceApply;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.engine.image.InPlaceRoundTest.Range;
import io.csi4j.driver.engine.image.InPlaceRounds.Step;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.replication.ReplicaState;
import io.csi4j.driver.replication.ReplicaStates;
import io.csi4j.driver.replication.Rounds;
import io.csi4j.driver.snapshot.Snapshots;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.volume.AccessMode;
import io.csi4j.driver.volume.CapacityRange;
import io.csi4j.driver.volume.Capability;
import io.csi4j.driver.volume.NewVolume;
import io.csi4j.driver.volume.Volumes;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A round applied in place stopped at each step of its commit (docs/inplace-rounds.md 1.2 and 1.3), as a crash or power
 * cut stops it: the engine throws at the step and is dropped, a new engine opens the pool (the start-up sweep of
 * {@code .tmp} first) and a new agent's {@code Rounds} runs what {@code Driver.agentServices} runs before serving
 * (replayJournals, then finishCutShort). The copy is then exactly one complete point: the old one before the journal
 * is complete, the new one after, the image byte for byte the point the state names and one inode with its only
 * replica, no journal left. A journal that fails its check makes the copy hold no point (never failed over to), its
 * replicas gone. Real XFS pool, catalog, replication states and domain code.
 */
@ExtendWith(LeakCheck.class)
class InPlaceReplayTest {
    private static final String NODE = "node-b";
    private static final ReplicatedVolumeId ID = ReplicatedVolumeId.generate(List.of("node-a", NODE));
    private static final String VOL = ID.toString();

    /** What the step hook throws: the engine stops there as a process killed there would. */
    private static final class Crash extends Error {
        Crash(Step step) {
            super("stopped at " + step);
        }
    }

    /** One agent over the pool: a fresh engine on it (as after a restart), the catalog, the states, the rounds. */
    private static final class Agent implements AutoCloseable {
        final ImageEngine engine;
        final Catalog catalog;
        final Volumes volumes;
        final ReplicaStates states;
        final Rounds rounds;

        Agent(XfsEngineFixture fx) {
            engine = ImageEngine.open(fx.pool, new ImageEngine.Options(1.0, DataPath.CONFIGURED.volumeDirectIo()));
            engine.images().layout().sweep();                         // the reconciler's first step at start-up
            Path dir = fx.nodeDir.resolve("agent");
            try {
                Files.createDirectories(dir);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            catalog = Catalog.openIn(dir);
            DriverConfig config = DriverConfig.defaults(dir, NODE);
            volumes = new Volumes(catalog, engine, config, InstantSource.system());
            Snapshots snapshots = new Snapshots(catalog, engine, volumes, config, InstantSource.system());
            states = new ReplicaStates(dir.resolve(ReplicaStates.DIRECTORY));
            rounds = new Rounds(states, volumes, snapshots, null, engine, NODE);
        }

        /** What Driver.agentServices runs before the agent serves. */
        void start() {
            rounds.replayJournals();
            rounds.finishCutShort();
        }

        String held() {
            return states.get(ID).orElseThrow().point();
        }

        @Override
        public void close() {
            catalog.close();
        }
    }

    /** The copy after a full round and one round in place: what it holds, and its bytes. */
    private record Held(Replica point, byte[] bytes) {}

    private static Held secondaryInSteadyState(XfsEngineFixture fx, Agent agent, Random random) throws Exception {
        agent.states.create(ID, new ReplicaState(1, ReplicaState.Role.SECONDARY, ""));
        agent.volumes.creation().createReplica(new NewVolume("pvc-1", new CapacityRange(SIZE, 0),
                List.of(Capability.mount(AccessMode.SINGLE_NODE_WRITER, "ext4")), Map.of(), Map.of(), ContentSource.NONE, Optional.empty()), ID);
        Replica first = InPlaceRoundTest.point(VOL);
        byte[] full = new byte[(int) SIZE];
        random.nextBytes(full);
        agent.volumes.changes().replaceImage(VOL, SIZE, null, first, OptionalLong.empty(),
                target -> target.write(java.nio.ByteBuffer.wrap(full), 0));
        agent.states.holding(ID, first.snapshotId());
        // one ordinary round through VolumeChanges: in place (the image keeps its inode)
        Object inode = Files.getAttribute(fx.image(VOL), "unix:ino");
        List<Range> ranges = InPlaceRoundTest.roundOf(random, SIZE);
        Replica second = InPlaceRoundTest.point(VOL);
        agent.volumes.changes().replaceImage(VOL, SIZE, first, second, OptionalLong.of(InPlaceRoundTest.bytes(ranges)),
                target -> ranges.forEach(r -> r.into(target)));
        agent.states.holding(ID, second.snapshotId());
        assertEquals(inode, Files.getAttribute(fx.image(VOL), "unix:ino"), "the round went into the image in place");
        byte[] bytes = applied(full, ranges);
        assertArrayEquals(bytes, Files.readAllBytes(fx.image(VOL)));
        return new Held(second, bytes);
    }

    /** {@code base} with the ranges applied in order: what the point they make is. */
    static byte[] applied(byte[] base, List<Range> ranges) {
        byte[] out = base.clone();
        for (Range r : ranges) {
            if (r.data() == null) Arrays.fill(out, (int) r.offset(), (int) (r.offset() + r.zeroLength()), (byte) 0);
            else System.arraycopy(r.data(), 0, out, (int) r.offset(), r.data().length);
        }
        return out;
    }

    /** The next round's commit on {@code agent}'s engine, stopped at {@code step} (record {@code at} while applying). */
    private static void roundStoppedAt(Agent agent, Held held, Replica next, List<Range> ranges, Step step, int at,
                                       Consumer<ImageImport> beforeCommit) {
        InPlaceApply crashing = agent.engine.inPlace((reached, record) -> {
            if (reached == step && (step != Step.APPLYING || record == at)) throw new Crash(step);
        });
        try (ImageImport round = crashing.beginInPlace(VOL, SIZE, SIZE, AccessType.mount("ext4"), "point", Label.NONE, held.point(), next,
                InPlaceRoundTest.bytes(ranges)).orElseThrow()) {
            ranges.forEach(r -> r.into(round));
            beforeCommit.accept(round);
            assertThrows(Crash.class, round::commit);
        }
    }

    private static void assertHolds(XfsEngineFixture fx, Agent agent, Replica point, byte[] bytes) throws Exception {
        assertEquals(point.snapshotId(), agent.held(), "the state names the point");
        assertArrayEquals(bytes, Files.readAllBytes(fx.image(VOL)), "the image is that point, whole");
        DataMover mover = agent.engine.capability(DataMover.class).orElseThrow();
        assertEquals(List.of(point), mover.replicas(), "its only replica");
        assertTrue(Files.isSameFile(fx.image(VOL), agent.engine.images().layout().replica(VOL, point.snapshotId())));
        assertFalse(agent.engine.images().layout().hasJournal(VOL), "no journal left");
        try (var left = Files.list(agent.engine.images().layout().tmpDir())) {
            assertEquals(List.of(), left.toList());
        }
    }

    /** Where the commit stops, and whether the copy then holds the new point. */
    private record Stop(Step step, int record, boolean newPoint, boolean torn) {}

    @Test
    void aRoundStoppedAtEachStepIsReplayedToTheOldOrTheNewPoint() throws Exception {
        int records = InPlaceRoundTest.roundOf(new Random(0), SIZE).size();
        var stops = List.of(
            new Stop(Step.JOURNAL_WRITTEN, 0, false, false),          // J1: the journal in .tmp, swept
            new Stop(Step.JOURNAL_COMPLETE, 0, true, false),          // after J2, before A1
            new Stop(Step.APPLYING, 0, true, false),                  // A2 about to write its first record
            new Stop(Step.APPLYING, records / 2, true, true),         // mid-A2: half the records in the image
            new Stop(Step.APPLIED, 0, true, false),                   // after A2's fsync, before A3
            new Stop(Step.RENAMED, 0, true, false));                  // after A3, before the journal is dropped
        for (Stop stop : stops) {
            try (var fx = new XfsEngineFixture("in-place-replay")) {
                Random random = new Random(11);
                Held held;
                List<Range> ranges;
                Replica next = InPlaceRoundTest.point(VOL);
                try (Agent before = new Agent(fx)) {
                    held = secondaryInSteadyState(fx, before, random);
                    ranges = InPlaceRoundTest.roundOf(random, SIZE);
                    roundStoppedAt(before, held, next, ranges, stop.step(), stop.record(), round -> { });
                    if (stop.torn()) {
                        byte[] now = Files.readAllBytes(fx.image(VOL));
                        assertFalse(Arrays.equals(held.bytes(), now), stop + ": some records are in the image");
                        assertFalse(Arrays.equals(applied(held.bytes(), ranges), now), stop + ": not all are");
                    }
                }
                try (Agent after = new Agent(fx)) {
                    after.start();
                    if (stop.newPoint()) assertHolds(fx, after, next, applied(held.bytes(), ranges));
                    else assertHolds(fx, after, held.point(), held.bytes());
                    after.rounds.delete(ID, false);
                }
            }
        }
    }

    @Test
    void aRoundWhosePointWasNotRecordedIsRolledForward() throws Exception {
        try (var fx = new XfsEngineFixture("in-place-replay")) {
            Random random = new Random(12);
            Held held;
            List<Range> ranges = InPlaceRoundTest.roundOf(new Random(13), SIZE);
            Replica next = InPlaceRoundTest.point(VOL);
            try (Agent before = new Agent(fx)) {
                held = secondaryInSteadyState(fx, before, random);
                // the commit done (journal dropped, replica renamed), the process gone before the state names the point
                before.volumes.changes().replaceImage(VOL, SIZE, held.point(), next, OptionalLong.of(InPlaceRoundTest.bytes(ranges)),
                        target -> ranges.forEach(r -> r.into(target)));
                assertEquals(held.point().snapshotId(), before.held());
            }
            try (Agent after = new Agent(fx)) {
                after.start();                                   // finishCutShort's case (docs/power-cut.md, finding 5)
                assertHolds(fx, after, next, applied(held.bytes(), ranges));
                after.rounds.delete(ID, false);
            }
        }
    }

    @Test
    void aJournalThatFailsItsCheckLeavesTheCopyHoldingNoPoint() throws Exception {
        try (var fx = new XfsEngineFixture("in-place-replay")) {
            Random random = new Random(14);
            try (Agent before = new Agent(fx)) {
                Held held = secondaryInSteadyState(fx, before, random);
                List<Range> ranges = InPlaceRoundTest.roundOf(random, SIZE);
                roundStoppedAt(before, held, InPlaceRoundTest.point(VOL), ranges, Step.APPLYING, 3, round -> { });
                Path journal = before.engine.images().layout().journal(VOL);
                try (RandomAccessFile f = new RandomAccessFile(journal.toFile(), "rw")) {
                    f.seek(f.length() / 2);
                    int b = f.read();
                    f.seek(f.length() / 2);
                    f.write(b ^ 0x40);                           // a flipped bit in a record's data
                }
            }
            try (Agent after = new Agent(fx)) {
                after.start();
                assertEquals("", after.held(), "a copy whose image may be torn holds no point");
                assertEquals(List.of(), after.engine.capability(DataMover.class).orElseThrow().replicas(),
                        "its replicas are gone: the torn inode is never offered as a delta base");
                assertFalse(after.engine.images().layout().hasJournal(VOL));
                var refused = assertThrows(DomainException.class, () -> after.rounds.failover(ID, 2, "node-a"));
                assertTrue(refused.getMessage().contains("holds no complete point"), refused.getMessage());
                after.rounds.delete(ID, false);
            }
        }
    }

    @Test
    void aJournalOverAnImageTheRoundNeverWroteIsDropped() throws Exception {
        // staged after the journal was complete (the commit would refuse), then the process gone: the image is the point
        try (var fx = new XfsEngineFixture("in-place-replay")) {
            Held held;
            try (Agent before = new Agent(fx)) {
                held = secondaryInSteadyState(fx, before, new Random(15));
                roundStoppedAt(before, held, InPlaceRoundTest.point(VOL), InPlaceRoundTest.roundOf(new Random(16), SIZE),
                        Step.JOURNAL_COMPLETE, 0, round -> { });
                fx.node.stage(VOL, fx.staging(VOL), new StageOptions.Block(0));
            }
            try (Agent after = new Agent(fx)) {
                after.start();
                assertFalse(after.engine.images().layout().hasJournal(VOL));
                assertEquals(held.point().snapshotId(), after.held());
                assertArrayEquals(held.bytes(), Files.readAllBytes(fx.image(VOL)), "nothing written under the loop device");
                fx.node.unstage(VOL, fx.staging(VOL));
                after.rounds.delete(ID, false);
            }
        }
        // expanded while the ranges arrived (split and grown), then the process gone before the commit looked again
        try (var fx = new XfsEngineFixture("in-place-replay")) {
            Held held;
            try (Agent before = new Agent(fx)) {
                held = secondaryInSteadyState(fx, before, new Random(17));
                roundStoppedAt(before, held, InPlaceRoundTest.point(VOL), InPlaceRoundTest.roundOf(new Random(18), SIZE),
                        Step.JOURNAL_COMPLETE, 0, round -> before.engine.expandVolume(VOL, 2 * SIZE));
            }
            try (Agent after = new Agent(fx)) {
                after.start();
                assertFalse(after.engine.images().layout().hasJournal(VOL));
                assertEquals(held.point().snapshotId(), after.held());
                byte[] image = Files.readAllBytes(fx.image(VOL));
                assertArrayEquals(held.bytes(), Arrays.copyOf(image, (int) SIZE), "the grown image still holds the point");
                assertArrayEquals(held.bytes(), Files.readAllBytes(after.engine.images().layout().replica(VOL, held.point().snapshotId())));
                after.rounds.delete(ID, false);
            }
        }
    }

    @Test
    void aJournalLeftWhenTheStateNamesItsPointOrTheVolumeIsDeletedIsDropped() throws Exception {
        try (var fx = new XfsEngineFixture("in-place-replay")) {
            Random random = new Random(19);
            Replica next = InPlaceRoundTest.point(VOL);
            List<Range> ranges;
            Held held;
            try (Agent before = new Agent(fx)) {
                held = secondaryInSteadyState(fx, before, random);
                ranges = InPlaceRoundTest.roundOf(random, SIZE);
                roundStoppedAt(before, held, next, ranges, Step.RENAMED, 0, round -> { });
                before.states.holding(ID, next.snapshotId());         // the state written, the journal not yet dropped
            }
            try (Agent after = new Agent(fx)) {
                after.start();
                assertHolds(fx, after, next, applied(held.bytes(), ranges));
                // a journal left and then the volume deleted: the delete takes it with the replicas
                roundStoppedAt(after, new Held(next, null), InPlaceRoundTest.point(VOL), InPlaceRoundTest.roundOf(random, SIZE),
                        Step.JOURNAL_COMPLETE, 0, round -> { });
                assertTrue(after.engine.images().layout().hasJournal(VOL));
                after.rounds.delete(ID, false);
                assertFalse(after.engine.images().layout().hasJournal(VOL));
                assertEquals(List.of(), after.engine.capability(DataMover.class).orElseThrow().replicas());
            }
        }
    }
}
