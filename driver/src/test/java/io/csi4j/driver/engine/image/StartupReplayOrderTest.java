package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.image.InPlaceRoundTest.SIZE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.engine.image.InPlaceRoundTest.Range;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.mobility.Bandwidth;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.plugin.Driver;
import io.csi4j.driver.replication.ReplicaState;
import io.csi4j.driver.replication.ReplicaStates;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import io.csi4j.driver.volume.AccessMode;
import io.csi4j.driver.volume.CapacityRange;
import io.csi4j.driver.volume.Capability;
import io.csi4j.driver.volume.NewVolume;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The start-up order in-place rounds rely on (docs/inplace-rounds.md 1.3 and 1.6): {@link Driver#open} sweeps the pool's
 * {@code .tmp} ({@code StartupSweepTest} pins that), then {@link Driver#agentServices} replays the round journals
 * before it finishes the rounds cut short after their replica was kept ({@code Rounds.finishCutShort}). The case
 * where the order shows: a round applied in place whose look at commit found the image split from its replica, built
 * beside from the journal, and was cut by a crash after that build kept the new point's replica and before it renamed
 * the build over the image. The journal is complete, the state names the old point, the image is still that point (its
 * own inode now) and the one replica kept is the new point's. Replay drops the journal (the image was never written),
 * and only then may finishCutShort roll the copy forward to the kept replica: it leaves a volume with a journal alone,
 * so the other order (or no replay) ends with a state naming a point no replica holds. Real XFS pool, the real Driver.
 */
@ExtendWith(LeakCheck.class)
class StartupReplayOrderTest {
    private static final String NODE = "node-b";
    private static final ReplicatedVolumeId ID = ReplicatedVolumeId.generate(List.of("node-a", NODE));
    private static final String VOL = ID.toString();

    @Test
    void journalsAreReplayedAfterTheSweepAndBeforeRoundsCutShortAreFinished() throws Exception {
        ScratchFilesystem.require("xfs");
        try (var scratch = ScratchFilesystem.create("xfs", 512 * XfsEngineFixture.MIB)) {
            LeakCheck.watch(scratch.dir());
            Path dataDir = scratch.mountPoint().resolve("data");
            DriverConfig config = DriverConfig.defaults(dataDir, NODE);
            ReplicaStates states = new ReplicaStates(dataDir.resolve(ReplicaStates.DIRECTORY));
            Random random = new Random(3);
            Replica held = InPlaceRoundTest.point(VOL);
            Replica next = InPlaceRoundTest.point(VOL);
            byte[] point = new byte[(int) SIZE];
            random.nextBytes(point);
            List<Range> ranges = InPlaceRoundTest.roundOf(random, SIZE);
            byte[] nextPoint = InPlaceReplayTest.applied(point, ranges);
            Path tmp;
            try (Driver driver = Driver.open(config)) {
                ImagePool images = ((ImageEngine) driver.engine()).images();
                PoolLayout layout = images.layout();
                tmp = layout.tmpDir();
                // the copy after a round: holding a point, its image one inode with that point's replica
                states.create(ID, new ReplicaState(1, ReplicaState.Role.SECONDARY, ""));
                driver.volumes().creation().createReplica(new NewVolume("pvc-1", new CapacityRange(SIZE, 0),
                        List.of(Capability.mount(AccessMode.SINGLE_NODE_WRITER, "ext4")), Map.of(), Map.of(), ContentSource.NONE,
                        Optional.empty()), ID);
                driver.volumes().changes().replaceImage(VOL, SIZE, null, held, OptionalLong.empty(),
                        target -> target.write(ByteBuffer.wrap(point), 0));
                states.holding(ID, held.snapshotId());
                Path image = images.image(VOL);
                assertTrue(Files.isSameFile(image, layout.replica(VOL, held.snapshotId())));

                // the next round in place: its journal complete (J2)
                Path journal = layout.temporary(VOL, PoolLayout.JOURNAL);
                try (var writer = new RoundJournal.Writer(journal, new RoundJournal.Header(VOL, held.snapshotId(), next.snapshotId(), SIZE))) {
                    for (Range r : ranges) {
                        if (r.data() == null) writer.zero(r.offset(), r.zeroLength());
                        else writer.data(ByteBuffer.wrap(r.data()), r.offset());
                    }
                    writer.finish();
                }
                layout.commitJournal(journal, VOL);
                // A1 found the image split from its replica (a stage or an expansion during J1: ImagePool.ownImage)
                Path own = layout.temporary(VOL, ".own");
                Files.copy(image, own);
                Files.move(own, image, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                // ... and built beside from the journal: the build synced, kept as the new point's replica (the old one
                // dropped), the crash before its rename over the image
                Path build = layout.temporary(VOL, ".img");
                Files.write(build, nextPoint);
                Files.createLink(layout.replica(VOL, next.snapshotId()), build);
                Files.delete(layout.replica(VOL, held.snapshotId()));
                // and another round's journal not yet complete: the sweep's
                Files.writeString(layout.temporary(VOL, PoolLayout.JOURNAL), "a journal being written");
            }
            assertTrue(entries(tmp).size() >= 2, "what the crash left in .tmp");

            try (Driver driver = Driver.open(config)) {
                ImagePool images = ((ImageEngine) driver.engine()).images();
                assertEquals(List.of(), entries(tmp), "open swept .tmp");
                assertTrue(images.layout().hasJournal(VOL), "the complete journal is not the sweep's");
                assertTrue(driver.agentServices(null, Bandwidth.unlimited()).size() > 1);

                assertFalse(images.layout().hasJournal(VOL), "replay dropped the journal: the image was never written");
                assertEquals(next.snapshotId(), states.get(ID).orElseThrow().point(),
                        "finishCutShort, after the replay, rolled the copy forward to the replica kept");
                assertArrayEquals(nextPoint, Files.readAllBytes(images.image(VOL)), "the image is that point, whole");
                assertEquals(List.of(next), driver.engine().capability(DataMover.class).orElseThrow().replicas(), "its only replica");
                assertTrue(Files.isSameFile(images.image(VOL), images.layout().replica(VOL, next.snapshotId())));
                assertEquals(List.of(), entries(tmp), "the start-up steps left nothing in .tmp");
            }
        }
    }

    private static List<Path> entries(Path dir) throws Exception {
        try (var s = Files.list(dir)) {
            return s.toList();
        }
    }
}
