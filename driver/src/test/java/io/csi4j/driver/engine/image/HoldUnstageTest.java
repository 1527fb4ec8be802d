package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.FreezeHold;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.storage.StorageException;
import io.csi4j.driver.testing.LeakCheck;
import java.util.List;
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
    /** A thread each: the common pool may have one worker on a small machine, which would queue the clean-up. */
    private static final Executor OWN_THREAD = r -> Thread.ofPlatform().start(r);

    @Test
    void anUnpublishAndUnstageDuringAFreezeHoldWaitForItsThawAndLeaveNothing() throws Exception {
        try (var fx = new XfsEngineFixture("hold-unstage")) {
            String vol = fx.stagedAndPublished("before the hold");
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
        try (var fx = new XfsEngineFixture("hold-unstage")) {
            String vol = fx.stagedAndPublished("before the hold");
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
}
