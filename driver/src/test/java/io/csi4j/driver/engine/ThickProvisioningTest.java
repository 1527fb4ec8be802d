package io.csi4j.driver.engine;

import static io.csi4j.driver.engine.ImageEngineLifecycleTest.snapshotId;
import static io.csi4j.driver.engine.ImageEngineLifecycleTest.volumeId;
import static io.csi4j.driver.engine.TestPool.node;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.volume.AccessMode;
import io.csi4j.driver.volume.Capability;
import io.csi4j.driver.volume.CapacityRange;
import io.csi4j.driver.volume.NewVolume;
import io.csi4j.driver.volume.Provisioning;
import io.csi4j.driver.volume.Volumes;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import io.csi4j.driver.engine.image.ImageEngine;
import io.csi4j.driver.os.BlockDevice;
import io.csi4j.driver.os.Durable;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.ZeroFill;
import io.csi4j.driver.storage.StorageException;
import io.csi4j.driver.testing.LeakCheck;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Thick volumes on a real XFS pool (reflinks, unwritten extents): every byte of the image allocated, written and
 * its own, read back with FIEMAP, on every path into a thick volume; a thin clone shares (so the check can fail).
 */
@ExtendWith(LeakCheck.class)
class ThickProvisioningTest {
    private static final long MIB = 1 << 20;

    private static Preallocation thick(PoolStorage engine) {
        return engine.capability(Preallocation.class).orElseThrow();
    }

    private static Path image(TestPool test, String volumeId) {
        return test.pool.path().resolve("volumes/" + volumeId + ".img");
    }

    private static void assertThick(Path image) {
        ZeroFill.Layout layout = ZeroFill.layout(image);
        assertTrue(layout.thick(), image.getFileName() + " is not thick: " + layout);
    }

    /** The lost attempt's first bug: an all-allocated blank image looked like data to staging, which refused to format it. */
    @ParameterizedTest(name = "a blank thick {0} volume is formatted at its first stage and stays thick")
    @ValueSource(strings = {"ext4", "xfs"})
    void blankThickVolumeIsFormattedAndStaysThick(String fsType) throws Exception {
        try (TestPool test = TestPool.create("xfs", 1024 * MIB); ImageEngine engine = test.imageEngine(1.0)) {
            String vol = volumeId();
            long size = engine.createVolume(vol, 64 * MIB, AccessType.mount(fsType), Label.NONE);   // xfs: its 300 MiB minimum
            ZeroFill.Layout thin = ZeroFill.layout(image(test, vol));
            assertEquals(size, thin.holeBytes(), "a thin blank image is one hole: " + thin);
            thick(engine).fill(vol, true);
            assertThick(image(test, vol));
            assertTrue(ZeroFill.fresh(image(test, vol)));

            Path staging = test.staging(vol);
            StageOptions.Mount mount = new StageOptions.Mount(fsType, List.of(), 0);
            node(engine).stage(vol, staging, mount);
            // the second bug: mkfs's discards and zero-outs through the loop punched holes back into the image
            assertThick(image(test, vol));
            assertFalse(ZeroFill.fresh(image(test, vol)), "formatted: the mark is gone, so it is never formatted again");
            byte[] data = new byte[256 * 1024];
            new Random(7).nextBytes(data);
            Files.write(staging.resolve("data"), data);
            Durable.fsync(staging.resolve("data"));
            Files.delete(staging.resolve("data"));
            Files.write(staging.resolve("data"), data);
            Durable.fsync(staging.resolve("data"));
            engine.capability(SpaceReclaimer.class).orElseThrow().trim(vol, staging);   // ReclaimSpace: nothing to give back
            assertThick(image(test, vol));
            node(engine).unstage(vol, staging);
            node(engine).stage(vol, staging, mount);
            assertArrayEquals(data, Files.readAllBytes(staging.resolve("data")), "staged again: not formatted over");
            node(engine).unstage(vol, staging);
            engine.deleteVolume(vol);
            assertEquals(List.of(), test.leftovers());
        }
    }

    @Test
    void thinCloneSharesAndThickRestoreAndCloneDoNot() throws Exception {
        try (TestPool test = TestPool.create("xfs", 512 * MIB); ImageEngine engine = test.imageEngine(1.0)) {
            String vol = volumeId();
            engine.createVolume(vol, 32 * MIB, AccessType.BLOCK, Label.NONE);
            Path staging = test.staging(vol);
            node(engine).stage(vol, staging, new StageOptions.Block(0));
            Path target = test.target(vol);
            node(engine).publish(vol, staging, target, new PublishOptions(true, false, List.of(), OptionalInt.empty()));
            Pattern.write(target, 0, 3, 4 * (int) MIB);
            Pattern.write(target, 20 * MIB, 4, 4096);
            node(engine).unpublish(vol, target);
            node(engine).unstage(vol, staging);
            String snap = snapshotId();
            engine.createSnapshot(snap, vol, Label.NONE);

            String thinClone = volumeId();
            engine.cloneVolume(thinClone, vol, 0, AccessType.BLOCK, Label.NONE);
            ZeroFill.Layout shared = ZeroFill.layout(image(test, thinClone));
            assertTrue(shared.sharedBytes() >= 4 * MIB, "a thin clone on XFS shares its source's extents: " + shared);
            assertTrue(shared.holeBytes() > 0, "and keeps its holes: " + shared);

            String thickRestore = volumeId();
            engine.restoreSnapshot(thickRestore, snap, 48 * MIB, AccessType.BLOCK, Label.NONE);
            thick(engine).fill(thickRestore, false);
            String thickClone = volumeId();
            engine.cloneVolume(thickClone, vol, 0, AccessType.BLOCK, Label.NONE);
            thick(engine).fill(thickClone, false);
            for (String copy : List.of(thickRestore, thickClone)) {
                assertThick(image(test, copy));
                assertFalse(ZeroFill.fresh(image(test, copy)), "a copy holds data: never marked as a fresh fill");
                Path copyStaging = test.staging(copy);
                Path copyTarget = test.target(copy);
                node(engine).stage(copy, copyStaging, new StageOptions.Block(0));
                node(engine).publish(copy, copyStaging, copyTarget, new PublishOptions(true, true, List.of(), OptionalInt.empty()));
                Pattern.assertHolds(copyTarget, 0, 3, 4 * (int) MIB);
                Pattern.assertHolds(copyTarget, 20 * MIB, 4, 4096);
                node(engine).unpublish(copy, copyTarget);
                node(engine).unstage(copy, copyStaging);
            }
            assertEquals(48 * MIB, Files.size(image(test, thickRestore)));
            for (String id : List.of(vol, thinClone, thickRestore, thickClone)) engine.deleteVolume(id);
            engine.deleteSnapshot(snap);
            assertEquals(List.of(), test.leftovers());
        }
    }

    /** Copies of a volume nothing was written into are as blank as it: formatted at their first stage, and thick. */
    @Test
    void thickCopiesOfBlankVolumesAreFormatted() throws Exception {
        try (TestPool test = TestPool.create("xfs", 1024 * MIB); ImageEngine engine = test.imageEngine(1.0)) {
            String thinBlank = volumeId();
            engine.createVolume(thinBlank, 64 * MIB, AccessType.mount("ext4"), Label.NONE);
            String snap = snapshotId();
            engine.createSnapshot(snap, thinBlank, Label.NONE);
            String thickBlank = volumeId();
            engine.createVolume(thickBlank, 64 * MIB, AccessType.mount("ext4"), Label.NONE);
            thick(engine).fill(thickBlank, true);

            String restored = volumeId();
            engine.restoreSnapshot(restored, snap, 0, AccessType.mount("ext4"), Label.NONE);
            thick(engine).fill(restored, false);
            String cloned = volumeId();
            engine.cloneVolume(cloned, thickBlank, 0, AccessType.mount("ext4"), Label.NONE);
            thick(engine).fill(cloned, false);
            StageOptions.Mount ext4 = new StageOptions.Mount("ext4", List.of(), 0);
            for (String copy : List.of(restored, cloned)) {
                assertTrue(ZeroFill.fresh(image(test, copy)), "all zeros, so marked");
                node(engine).stage(copy, test.staging(copy), ext4);
                Files.writeString(test.staging(copy).resolve("hello"), copy);
                assertThick(image(test, copy));
                node(engine).unstage(copy, test.staging(copy));
            }
            for (String id : List.of(thinBlank, thickBlank, restored, cloned)) engine.deleteVolume(id);
            engine.deleteSnapshot(snap);
            assertEquals(List.of(), test.leftovers());
        }
    }

    /** Expanded while staged: the new part is filled before the loop device shows it; what it shows is never touched. */
    @Test
    void thickExpandAllocatesTheNewPart() throws Exception {
        try (TestPool test = TestPool.create("xfs", 512 * MIB); ImageEngine engine = test.imageEngine(1.0)) {
            String vol = volumeId();
            engine.createVolume(vol, 32 * MIB, AccessType.BLOCK, Label.NONE);
            thick(engine).fill(vol, true);
            Path staging = test.staging(vol);
            node(engine).stage(vol, staging, new StageOptions.Block(0));
            assertFalse(ZeroFill.fresh(image(test, vol)), "a block volume's zeros are its workload's from its first stage");
            Path target = test.target(vol);
            node(engine).publish(vol, staging, target, new PublishOptions(true, false, List.of(), OptionalInt.empty()));
            Pattern.write(target, 0, 5, (int) MIB);
            Pattern.write(target, 31 * MIB, 6, (int) MIB);

            assertEquals(80 * MIB, thick(engine).expand(vol, 80 * MIB));
            assertThick(image(test, vol));
            assertEquals(80 * MIB, BlockDevice.size(LoopDevice.findByBackingFile(image(test, vol)).getFirst().node()));
            Pattern.assertHolds(target, 0, 5, (int) MIB);
            Pattern.assertHolds(target, 31 * MIB, 6, (int) MIB);
            assertEquals(80 * MIB, thick(engine).expand(vol, 64 * MIB), "never shrinks; a repeat converges");
            assertThick(image(test, vol));

            node(engine).unpublish(vol, target);
            node(engine).unstage(vol, staging);
            engine.deleteVolume(vol);
            assertEquals(List.of(), test.leftovers());
        }
    }

    /** No overcommit: what the pool's filesystem really has free, refused before a byte is written. */
    @Test
    void thickNeedsTheRealFreeSpace() throws Exception {
        try (TestPool test = TestPool.create("xfs", 512 * MIB); ImageEngine engine = test.imageEngine(4.0)) {
            assertEquals(StorageException.Reason.NO_SPACE,
                    assertThrows(StorageException.class, () -> thick(engine).requireRoom(1024 * MIB)).reason());
            thick(engine).requireRoom(256 * MIB);

            // thin with overcommit may promise 1 GiB; filling it cannot work, and says so
            String vol = volumeId();
            engine.createVolume(vol, 1024 * MIB, AccessType.BLOCK, Label.NONE);
            assertEquals(StorageException.Reason.NO_SPACE,
                    assertThrows(StorageException.class, () -> thick(engine).fill(vol, true)).reason());
            assertFalse(ZeroFill.fresh(image(test, vol)), "a failed fill is never marked");
            engine.deleteVolume(vol);

            // an expansion past the real free space: refused, the volume as it was
            String small = volumeId();
            engine.createVolume(small, 64 * MIB, AccessType.BLOCK, Label.NONE);
            thick(engine).fill(small, true);
            assertEquals(StorageException.Reason.NO_SPACE,
                    assertThrows(StorageException.class, () -> thick(engine).expand(small, 2048 * MIB)).reason());
            assertEquals(64 * MIB, Files.size(image(test, small)));
            assertThick(image(test, small));
            engine.deleteVolume(small);
            assertEquals(List.of(), test.leftovers());
        }
    }

    /** CreateVolume and ControllerExpandVolume through the domain's rules, on the real engine: the parameter reaches the image. */
    @Test
    void thickThroughTheDomain() throws Exception {
        Path catalogDir = LeakCheck.temporaryDirectory("csi4j-thick-catalog-");
        try (TestPool test = TestPool.create("xfs", 512 * MIB); ImageEngine engine = test.imageEngine(1.0);
             Catalog catalog = Catalog.openIn(catalogDir)) {
            Volumes volumes = new Volumes(catalog, engine, DriverConfig.defaults(catalogDir, "node-1"), InstantSource.system());
            NewVolume request = new NewVolume("thick-one", new CapacityRange(32 * MIB, 0),
                    List.of(Capability.block(AccessMode.SINGLE_NODE_WRITER)), Map.of(Provisioning.PARAMETER, "thick"), Map.of(),
                    ContentSource.NONE, Optional.empty());
            VolumeRecord made = volumes.creation().create(request);
            assertEquals(State.READY, made.state());
            assertThick(image(test, made.id()));
            assertTrue(ZeroFill.fresh(image(test, made.id())));
            assertEquals(made.id(), volumes.creation().create(request).id(), "a repeat answers the volume it made");

            VolumeRecord thin = volumes.creation().create(new NewVolume("thin-one", new CapacityRange(32 * MIB, 0),
                    List.of(Capability.block(AccessMode.SINGLE_NODE_WRITER)), Map.of(), Map.of(), ContentSource.NONE, Optional.empty()));
            assertFalse(ZeroFill.layout(image(test, thin.id())).thick(), "the default stays thin");

            assertEquals(48 * MIB, volumes.changes().expand(made.id(), new CapacityRange(48 * MIB, 0)).capacityBytes());
            assertThick(image(test, made.id()));

            DomainException tooBig = assertThrows(DomainException.class, () -> volumes.creation().create(new NewVolume("too-big",
                    new CapacityRange(1024 * MIB, 0), List.of(Capability.block(AccessMode.SINGLE_NODE_WRITER)),
                    Map.of(Provisioning.PARAMETER, "thick"), Map.of(), ContentSource.NONE, Optional.empty())));
            assertEquals(DomainException.Kind.EXHAUSTED, tooBig.kind());
            assertTrue(volumes.reads().byName("too-big").isEmpty(), "refused before anything was written");
            volumes.deletion().delete(made.id());
            volumes.deletion().delete(thin.id());
            assertEquals(Set.of(), engine.volumeArtifacts());
        }
    }

    @Test
    void dirEngineMakesNoThickVolumes() {
        try (TestPool test = TestPool.create("xfs", 512 * MIB); DirEngine engine = test.dirEngine()) {
            assertTrue(engine.capability(Preallocation.class).isEmpty());
        }
    }
}
