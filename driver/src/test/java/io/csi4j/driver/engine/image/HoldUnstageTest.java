package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.DataPath;
import io.csi4j.driver.engine.FreezeHold;
import io.csi4j.driver.engine.NodeStorage;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.engine.PublishOptions;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.storage.StorageException;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A group snapshot that spans nodes holds its members frozen between calls (FreezeVolumes ... ThawVolumes, at most
 * 10 s from the controller). The hold keeps the staged filesystem open and frozen, as a cut does: an unstage meanwhile
 * met EBUSY (BUSY at once, the CO retrying into the same freeze). It counts as a cut now: an unpublish and unstage wait
 * for the thaw and succeed ({@link CutUnstageTest} is the same for a cut), and give up BUSY after
 * {@link ImageFreezer#CUT_WAIT_S} when the hold outlasts that (an agent holds 60 s at most).
 */
@ExtendWith(LeakCheck.class)
class HoldUnstageTest {
    private static final long MIB = 1 << 20;
    /** A thread each: the common pool may have one worker on a small machine, which would queue the clean-up. */
    private static final Executor OWN_THREAD = r -> Thread.ofPlatform().start(r);

    @Test
    void anUnpublishAndUnstageDuringAFreezeHoldWaitForItsThawAndLeaveNothing() throws Exception {
        try (var fx = new Fixture()) {
            String vol = fx.stagedAndPublished();
            FreezeHold hold = fx.engine.freezer().holdFrozen(List.of(vol));
            CompletableFuture<Void> cleanUp;
            try {
                cleanUp = CompletableFuture.runAsync(() -> {
                    fx.node.unpublish(vol, fx.target(vol));
                    fx.node.unstage(vol, fx.staging(vol));
                }, OWN_THREAD);
                Thread.sleep(1000);
                assertFalse(cleanUp.isDone(), () -> "waits for the thaw, not an EBUSY answer: " + failure(cleanUp));
            } finally {
                hold.close();   // never leave a freeze behind
            }
            cleanUp.get(30, TimeUnit.SECONDS);
            assertTrue(MountTable.read().under(fx.nodeDir).isEmpty(), MountTable.read().under(fx.nodeDir).toString());
            assertEquals(List.of(), LoopDevice.findByBackingFile(fx.image(vol)));
            fx.engine.deleteVolume(vol);
        }
    }

    @Test
    void anUnstageGivesUpBusyWhenTheHoldOutlastsTheWaitAndWorksAfterTheThaw() throws Exception {
        try (var fx = new Fixture()) {
            String vol = fx.stagedAndPublished();
            fx.node.unpublish(vol, fx.target(vol));
            FreezeHold hold = fx.engine.freezer().holdFrozen(List.of(vol));
            try {
                long started = System.nanoTime();
                var unstage = CompletableFuture.runAsync(() -> fx.node.unstage(vol, fx.staging(vol)), OWN_THREAD);
                var failed = assertThrows(ExecutionException.class, () -> unstage.get(ImageFreezer.CUT_WAIT_S + 60, TimeUnit.SECONDS));
                long waitedS = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
                var busy = assertInstanceOf(StorageException.class, failed.getCause());
                assertEquals(StorageException.Reason.BUSY, busy.reason(), busy.getMessage());
                assertTrue(busy.getMessage().contains("held frozen for a group snapshot"), busy.getMessage());
                assertTrue(waitedS >= ImageFreezer.CUT_WAIT_S - 1, "waited " + waitedS + " s");
                assertTrue(MountTable.read().at(fx.staging(vol)).isPresent(), "still staged: nothing was unmounted");
            } finally {
                hold.close();
            }
            fx.node.unstage(vol, fx.staging(vol));
            assertTrue(MountTable.read().under(fx.nodeDir).isEmpty(), MountTable.read().under(fx.nodeDir).toString());
            fx.engine.deleteVolume(vol);
        }
    }

    private static String failure(CompletableFuture<?> f) {
        if (!f.isDone()) return "running";
        try {
            f.get();
            return "done";
        } catch (Exception e) {
            return e.getCause() == null ? e.toString() : e.getCause().toString();
        }
    }

    /** An xfs pool on a scratch filesystem, its image engine and node side, and a directory for staging and targets. */
    private static final class Fixture implements AutoCloseable {
        final ScratchFilesystem scratch;
        final Path nodeDir;
        final Pool pool;
        final ImageEngine engine;
        final NodeStorage node;

        Fixture() throws Exception {
            ScratchFilesystem.require("xfs");
            scratch = ScratchFilesystem.create("xfs", 512 * MIB);
            LeakCheck.watch(scratch.dir());
            nodeDir = LeakCheck.watch(Files.createTempDirectory("csi4j-hold-unstage-"));
            pool = Pool.open(new DataDir(scratch.mountPoint().resolve("data")), OptionalLong.empty());
            engine = ImageEngine.open(pool, new ImageEngine.Options(1.0, DataPath.CONFIGURED.volumeDirectIo()));
            node = engine.capability(NodeStorage.class).orElseThrow();
        }

        Path staging(String vol) {
            return nodeDir.resolve("staging").resolve(vol);
        }

        Path target(String vol) {
            return nodeDir.resolve("pods").resolve(vol).resolve("mount");
        }

        Path image(String vol) {
            return pool.path().resolve("volumes/" + vol + ".img");
        }

        String stagedAndPublished() throws Exception {
            String vol = ObjectId.generate(ObjectId.Kind.VOLUME, "node-1").toString();
            engine.createVolume(vol, 32 * MIB, AccessType.mount("ext4"), Label.NONE);
            node.stage(vol, staging(vol), new StageOptions.Mount("ext4", List.of(), 0));
            node.publish(vol, staging(vol), target(vol), new PublishOptions(false, false, List.of(), OptionalInt.empty()));
            Files.writeString(target(vol).resolve("kept"), "before the hold");
            return vol;
        }

        @Override
        public void close() throws Exception {
            try {
                engine.freezer().thawLeftFrozen();
                for (Path p : MountTable.read().under(nodeDir).stream().map(m -> m.mountPoint()).sorted(java.util.Comparator.reverseOrder()).toList()) {
                    io.csi4j.driver.os.Mounts.unmount(p);
                }
                engine.close();
            } finally {
                LeakCheck.release(Set.of(nodeDir, scratch.mountPoint()));
                if (MountTable.read().under(nodeDir).isEmpty()) {
                    try (var paths = Files.walk(nodeDir)) {
                        for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
                    }
                }
                scratch.close();
            }
        }
    }
}
