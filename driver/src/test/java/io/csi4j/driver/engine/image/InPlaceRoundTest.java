package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.DataPath;
import io.csi4j.driver.engine.ImageImport;
import io.csi4j.driver.engine.InPlaceApply;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.os.ExtentFile;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.storage.StorageException;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A secondary's round applied in place under a journal (docs/inplace-rounds.md, section 1) on a real reflink XFS pool:
 * the image it leaves is byte for byte the one today's build beside leaves for the same ranges, the image stays one
 * inode with the replica of the point and stops fragmenting; every condition of 1.1 that fails keeps today's build;
 * a stage before the apply refuses the round (StageReplaceTest's rule) and one during it waits; and the engine stopped
 * at each step of a commit (what a crash leaves) is replayed to the old point or the new one, whole.
 */
@ExtendWith(LeakCheck.class)
class InPlaceRoundTest {
    static final long SIZE = 32 * XfsEngineFixture.MIB;
    static final int K64 = 64 * 1024;

    /** A received range: data at an offset, or a zero range (data null). */
    record Range(long offset, byte[] data, long zeroLength) {
        static Range data(long offset, byte[] data) {
            return new Range(offset, data, 0);
        }

        static Range zero(long offset, long length) {
            return new Range(offset, null, length);
        }

        void into(ImageImport target) {
            if (data == null) target.zero(offset, zeroLength);
            else target.write(ByteBuffer.wrap(data), offset);
        }
    }

    /** A round's ranges as a primary sends them: data in 64 KiB blocks (one short), overlapping writes, a zero range. */
    static List<Range> roundOf(Random random, long size) {
        List<Range> ranges = dataOf(random, size);
        ranges.add(Range.zero(random.nextLong(size / K64 - 4) * K64, 3L * K64));
        return ranges;
    }

    /** As {@link #roundOf} without the zero range: every range a write over data (no hole punched, none filled). */
    static List<Range> dataOf(Random random, long size) {
        List<Range> ranges = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            byte[] data = new byte[i == 7 ? 4096 + 512 : K64];
            random.nextBytes(data);
            ranges.add(Range.data(random.nextLong(size / K64 - 1) * K64, data));
        }
        ranges.add(Range.data(ranges.get(3).offset() + 4096, new byte[] {1, 2, 3}));   // over an earlier range: the later wins
        return ranges;
    }

    static Replica point(String volumeId) {
        return new Replica(volumeId, ObjectId.generate(ObjectId.Kind.SNAPSHOT, "node-2").toString());
    }

    /** Today's round: a new image built beside from {@code base} (null: a full copy), kept as {@code keepAs}. */
    static void built(DataMover mover, String vol, Replica base, Replica keepAs, List<Range> ranges) {
        try (ImageImport target = mover.beginImport(vol, SIZE, SIZE, new AccessType.Block(), "point " + keepAs.snapshotId(), Label.NONE,
                base, keepAs)) {
            ranges.forEach(r -> r.into(target));
            target.commit();
        }
    }

    /** The round applied in place; fails when the engine would build beside. */
    static void inPlace(InPlaceApply apply, String vol, Replica base, Replica keepAs, List<Range> ranges) {
        try (ImageImport target = begin(apply, vol, base, keepAs, SIZE, bytes(ranges)).orElseThrow(
                () -> new AssertionError("the round of " + vol + " on " + base.snapshotId() + " is not applied in place"))) {
            ranges.forEach(r -> r.into(target));
            target.commit();
        }
    }

    static Optional<ImageImport> begin(InPlaceApply apply, String vol, Replica base, Replica keepAs, long sourceBytes, long bytesToSend) {
        return apply.beginInPlace(vol, sourceBytes, SIZE, new AccessType.Block(), "point " + keepAs.snapshotId(), Label.NONE, base, keepAs,
                bytesToSend);
    }

    static long bytes(List<Range> ranges) {
        return ranges.stream().mapToLong(r -> r.data() == null ? r.zeroLength() : r.data().length).sum();
    }

    /** A new block volume of {@code SIZE} holding one full round of data everywhere (point returned), its image one inode with its replica. */
    static Replica fullRound(XfsEngineFixture fx, String vol, Random random) {
        fx.engine.createVolume(vol, SIZE, new AccessType.Block(), Label.NONE);
        Replica first = point(vol);
        List<Range> all = new ArrayList<>();
        for (long at = 0; at < SIZE; at += K64) {
            byte[] data = new byte[K64];
            random.nextBytes(data);
            all.add(Range.data(at, data));
        }
        built(fx.mover, vol, null, first, all);
        return first;
    }

    static String newId() {
        return ObjectId.generate(ObjectId.Kind.VOLUME, "node-1").toString();
    }

    static void assertOnePoint(XfsEngineFixture fx, String vol, Replica held) throws Exception {
        Path replica = fx.engine.images().layout().replica(vol, held.snapshotId());
        assertTrue(Files.isSameFile(fx.image(vol), replica), "the image is the replica of " + held.snapshotId());
        assertEquals(2, ImagePool.links(fx.image(vol)));
        assertEquals(List.of(held), fx.mover.replicas().stream().filter(r -> r.sourceVolumeId().equals(vol)).toList(), "one replica");
        assertFalse(fx.engine.images().layout().hasJournal(vol), "no journal left");
        try (var left = Files.list(fx.engine.images().layout().tmpDir())) {
            assertEquals(List.of(), left.toList(), "nothing left in .tmp");
        }
    }

    @Test
    void anInPlaceRoundLeavesTheBytesOfTheBuild() throws Exception {
        try (var fx = new XfsEngineFixture("in-place")) {
            InPlaceApply apply = fx.engine.capability(InPlaceApply.class).orElseThrow();
            String built = newId();
            String applied = newId();
            Replica builtHeld = fullRound(fx, built, new Random(1));
            Replica appliedHeld = fullRound(fx, applied, new Random(1));
            assertArrayEquals(Files.readAllBytes(fx.image(built)), Files.readAllBytes(fx.image(applied)));
            Random rounds = new Random(2);
            for (int round = 0; round < 4; round++) {
                List<Range> ranges = roundOf(rounds, SIZE);
                Replica nextBuilt = point(built);
                Replica nextApplied = point(applied);
                built(fx.mover, built, builtHeld, nextBuilt, ranges);
                inPlace(apply, applied, appliedHeld, nextApplied, ranges);
                builtHeld = nextBuilt;
                appliedHeld = nextApplied;
                assertArrayEquals(Files.readAllBytes(fx.image(built)), Files.readAllBytes(fx.image(applied)), "round " + round);
                assertOnePoint(fx, applied, appliedHeld);
                assertOnePoint(fx, built, builtHeld);
            }
            for (String vol : List.of(built, applied)) {
                fx.engine.deleteVolume(vol);
                fx.mover.dropReplicas(vol);
            }
        }
    }

    /**
     * The journal's promise counts on ranges of 4 KiB or more (extents); a round of smaller ones, within its header's
     * bytes, takes more journal than that (a record's fixed part each): the promise grows before the journal does, so
     * the pool never holds a journal it did not promise, and goes back whole at commit.
     */
    @Test
    void aJournalOfSmallRangesPromisesMoreBeforeItGrows() throws Exception {
        try (var fx = new XfsEngineFixture("in-place-small")) {
            InPlaceApply apply = fx.engine.capability(InPlaceApply.class).orElseThrow();
            String vol = newId();
            Replica held = fullRound(fx, vol, new Random(1));
            byte[] expected = Files.readAllBytes(fx.image(vol));
            long before = fx.engine.pool().provisionedBytes();
            Replica next = point(vol);
            byte[] data = new byte[K64];
            new Random(2).nextBytes(data);
            System.arraycopy(data, 0, expected, 5 * K64, K64);
            try (ImageImport round = begin(apply, vol, held, next, SIZE, K64).orElseThrow()) {
                for (int at = 0; at < K64; at += 4) round.write(ByteBuffer.wrap(data, at, 4), 5L * K64 + at);
                Path journal;
                try (var files = Files.list(fx.engine.images().layout().tmpDir())) {
                    journal = files.filter(f -> f.getFileName().toString().startsWith(vol + PoolLayout.JOURNAL)).findFirst().orElseThrow();
                }
                long promised = fx.engine.pool().provisionedBytes() - before;
                assertTrue(Files.size(journal) + RoundJournal.TRAILER_BYTES <= promised,
                        "the journal's " + Files.size(journal) + " bytes (" + K64 / 4 + " records) within the " + promised + " promised");
                round.commit();
            }
            assertEquals(before, fx.engine.pool().provisionedBytes(), "the promise goes back at commit");
            assertArrayEquals(expected, Files.readAllBytes(fx.image(vol)));
            assertOnePoint(fx, vol, next);
            fx.engine.deleteVolume(vol);
            fx.mover.dropReplicas(vol);
        }
    }

    @Test
    void anImageWrittenInPlaceStopsFragmenting() throws Exception {
        try (var fx = new XfsEngineFixture("in-place-extents")) {
            InPlaceApply apply = fx.engine.capability(InPlaceApply.class).orElseThrow();
            String built = newId();
            String applied = newId();
            Replica builtHeld = fullRound(fx, built, new Random(1));
            Replica appliedHeld = fullRound(fx, applied, new Random(1));
            List<Integer> builtExtents = new ArrayList<>(List.of(extents(fx.image(built))));
            List<Integer> appliedExtents = new ArrayList<>(List.of(extents(fx.image(applied))));
            Random rounds = new Random(7);
            for (int round = 0; round < 5; round++) {
                List<Range> ranges = dataOf(rounds, SIZE);
                Replica nextBuilt = point(built);
                Replica nextApplied = point(applied);
                built(fx.mover, built, builtHeld, nextBuilt, ranges);
                inPlace(apply, applied, appliedHeld, nextApplied, ranges);
                builtHeld = nextBuilt;
                appliedHeld = nextApplied;
                builtExtents.add(extents(fx.image(built)));
                appliedExtents.add(extents(fx.image(applied)));
            }
            assertArrayEquals(Files.readAllBytes(fx.image(built)), Files.readAllBytes(fx.image(applied)));
            System.out.println("extents after each round, in place: " + appliedExtents + ", built beside: " + builtExtents);
            // written in place, the image's blocks are its own: no copy-on-write, so no extent split; the build's grow
            assertEquals(appliedExtents.get(0), appliedExtents.get(appliedExtents.size() - 1), "in place: " + appliedExtents
                    + ", built: " + builtExtents);
            assertTrue(builtExtents.get(builtExtents.size() - 1) > appliedExtents.get(appliedExtents.size() - 1),
                    "in place: " + appliedExtents + ", built: " + builtExtents);
            for (String vol : List.of(built, applied)) {
                fx.engine.deleteVolume(vol);
                fx.mover.dropReplicas(vol);
            }
        }
    }

    static int extents(Path file) {
        try (ExtentFile f = ExtentFile.open(file)) {
            return f.count();
        }
    }

    /** What makes a round of a secondary holding a point in steady state not go in place. */
    private record NotInPlace(String name, Consumer<Fixture> before, long sourceBytes, long bytesToSend) {}

    private record Fixture(XfsEngineFixture fx, String vol) {}

    @Test
    void everyConditionThatFailsKeepsTheBuildBeside() throws Exception {
        var cases = List.of(
            new NotInPlace("a stage between rounds (the image split from its replica)", f -> {
                f.fx().node.stage(f.vol(), f.fx().staging(f.vol()), new StageOptions.Block(0));
                f.fx().node.unstage(f.vol(), f.fx().staging(f.vol()));
            }, SIZE, K64),
            new NotInPlace("an expansion (split and grown)", f -> f.fx().engine.expandVolume(f.vol(), 2 * SIZE), 2 * SIZE, K64),
            new NotInPlace("a bigger point", f -> { }, 2 * SIZE, K64),
            new NotInPlace("a round larger than the journal's limit", f -> { }, SIZE, InPlaceApply.journalLimit(SIZE) + 1),
            new NotInPlace("staged (a loop device on the image)", f -> f.fx().node.stage(f.vol(), f.fx().staging(f.vol()),
                    new StageOptions.Block(0)), SIZE, K64));
        try (var fx = new XfsEngineFixture("in-place-not")) {
            InPlaceApply apply = fx.engine.capability(InPlaceApply.class).orElseThrow();
            for (NotInPlace c : cases) {
                String vol = newId();
                Replica held = fullRound(fx, vol, new Random(3));
                Replica next = point(vol);
                assertTrue(begin(apply, vol, held, point(vol), SIZE, K64).map(i -> { i.close(); return true; }).orElse(false),
                        c.name() + ": in place before");
                c.before().accept(new Fixture(fx, vol));
                assertEquals(Optional.empty(), begin(apply, vol, held, next, c.sourceBytes(), c.bytesToSend()), c.name());
                assertFalse(fx.engine.images().layout().hasJournal(vol));
                if (fx.engine.inUse(vol)) fx.node.unstage(vol, fx.staging(vol));
                fx.engine.deleteVolume(vol);
                fx.mover.dropReplicas(vol);
            }
            // a first round (no base) and a base that is not the image's replica
            String vol = newId();
            Replica held = fullRound(fx, vol, new Random(4));
            assertEquals(Optional.empty(), begin(apply, vol, null, point(vol), SIZE, K64), "no base");
            assertEquals(Optional.empty(), begin(apply, vol, point(vol), point(vol), SIZE, K64), "a base this copy does not hold");
            assertTrue(begin(apply, vol, held, point(vol), SIZE, K64).map(i -> { i.close(); return true; }).orElse(false));
            fx.engine.deleteVolume(vol);
            fx.mover.dropReplicas(vol);
        }
    }

    @Test
    void aPoolThatCannotReflinkBuildsBeside() throws Exception {
        ScratchFilesystem.require("ext4");
        try (ScratchFilesystem scratch = ScratchFilesystem.create("ext4", 256 * XfsEngineFixture.MIB)) {
            LeakCheck.watch(scratch.dir());
            Pool pool = Pool.open(new DataDir(scratch.mountPoint().resolve("data")), OptionalLong.empty());
            try (ImageEngine engine = ImageEngine.open(pool, new ImageEngine.Options(1.0, DataPath.CONFIGURED.volumeDirectIo()))) {
                assertFalse(pool.reflink());
                InPlaceApply apply = engine.capability(InPlaceApply.class).orElseThrow();
                DataMover mover = engine.capability(DataMover.class).orElseThrow();
                String vol = newId();
                engine.createVolume(vol, SIZE, new AccessType.Block(), Label.NONE);
                Replica first = point(vol);
                built(mover, vol, null, first, List.of(Range.data(0, new byte[K64])));
                assertEquals(Optional.empty(), begin(apply, vol, first, point(vol), SIZE, K64));
                engine.deleteVolume(vol);
            }
        }
    }

    @Test
    void aCommitThatFindsTheImageSplitOrStagedBuildsBesideOrRefuses() throws Exception {
        try (var fx = new XfsEngineFixture("in-place-recheck")) {
            InPlaceApply apply = fx.engine.capability(InPlaceApply.class).orElseThrow();
            Random random = new Random(5);

            // split while the ranges arrived (J1 holds no volume lock): built beside from the journal, nothing received twice
            String split = newId();
            Replica held = fullRound(fx, split, random);
            String twin = newId();
            Replica twinHeld = fullRound(fx, twin, new Random(5));
            List<Range> ranges = roundOf(random, SIZE);
            Replica next = point(split);
            try (ImageImport round = begin(apply, split, held, next, SIZE, bytes(ranges)).orElseThrow()) {
                ranges.forEach(r -> r.into(round));
                fx.node.stage(split, fx.staging(split), new StageOptions.Block(0));
                fx.node.unstage(split, fx.staging(split));
                assertEquals(1, ImagePool.links(fx.image(split)), "the stage split the image");
                round.commit();
            }
            built(fx.mover, twin, twinHeld, point(twin), ranges);
            assertArrayEquals(Files.readAllBytes(fx.image(twin)), Files.readAllBytes(fx.image(split)));
            assertOnePoint(fx, split, next);

            // staged while the ranges arrived: the commit refuses, nothing written, the point and the mount kept
            byte[] before = Files.readAllBytes(fx.image(split));
            List<Range> more = roundOf(random, SIZE);
            try (ImageImport round = begin(apply, split, next, point(split), SIZE, bytes(more)).orElseThrow()) {
                more.forEach(r -> r.into(round));
                fx.node.stage(split, fx.staging(split), new StageOptions.Block(0));
                var refused = assertThrows(StorageException.class, round::commit);
                assertEquals(StorageException.Reason.IN_USE, refused.reason(), refused.getMessage());
            }
            assertTrue(fx.engine.inUse(split));
            fx.node.unstage(split, fx.staging(split));
            assertArrayEquals(before, Files.readAllBytes(fx.image(split)), "the image is the point it held");
            assertArrayEquals(before, Files.readAllBytes(fx.engine.images().layout().replica(split, next.snapshotId())));
            assertFalse(fx.engine.images().layout().hasJournal(split), "the refused round's journal is dropped");
            for (String vol : List.of(split, twin)) {
                fx.engine.deleteVolume(vol);
                fx.mover.dropReplicas(vol);
            }
        }
    }

    @Test
    void aStageDuringTheApplyWaitsAndAttachesTheNewPoint() throws Exception {
        try (var fx = new XfsEngineFixture("in-place-stage")) {
            Random random = new Random(6);
            String vol = newId();
            Replica held = fullRound(fx, vol, random);
            List<Range> ranges = roundOf(random, SIZE);
            AtomicReference<Thread> stage = new AtomicReference<>();
            AtomicReference<Throwable> failed = new AtomicReference<>();
            InPlaceApply apply = fx.engine.inPlace((step, record) -> {
                if (step != InPlaceRounds.Step.APPLYING || record != ranges.size() / 2) return;
                Thread t = Thread.ofPlatform().start(() -> {
                    try {
                        fx.node.stage(vol, fx.staging(vol), new StageOptions.Block(0));
                    } catch (Throwable e) {
                        failed.set(e);
                    }
                });
                stage.set(t);
                long until = System.nanoTime() + 10_000_000_000L;
                while (t.getState() != Thread.State.BLOCKED && t.isAlive() && System.nanoTime() < until) Thread.onSpinWait();
                assertEquals(Thread.State.BLOCKED, t.getState(), "the stage waits for the apply's lock");
            });
            Replica next = point(vol);
            inPlace(apply, vol, held, next, ranges);
            stage.get().join();
            assertEquals(null, failed.get());
            byte[] expected = Files.readAllBytes(fx.engine.images().layout().replica(vol, next.snapshotId()));
            assertEquals(1, ImagePool.links(fx.image(vol)), "the stage made the image its own file after the apply");
            assertArrayEquals(expected, Files.readAllBytes(fx.image(vol)), "the stage attached the new point");
            fx.node.unstage(vol, fx.staging(vol));
            fx.engine.deleteVolume(vol);
            fx.mover.dropReplicas(vol);
        }
    }
}
