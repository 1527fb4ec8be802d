package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.NodeStorage;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.testing.LeakCheck;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A cut (a snapshot, a replication point) holds the staged filesystem open and frozen while it copies the image; an
 * unpublish and unstage of the volume meanwhile (the CO's clean-up on a primary whose secondaries are pulling) wait for
 * it and then succeed, instead of an unmount that answers EBUSY (seen as a flaky "busy" NodeUnstageVolume in
 * ClusterReplicaFollowTest on a copy-fallback ext4 pool, where a cut copies the whole image).
 */
@ExtendWith(LeakCheck.class)
class CutUnstageTest {
    @Test
    void anUnpublishAndUnstageDuringACutWaitForItAndLeaveNothing() throws Exception {
        try (var fx = new XfsEngineFixture("cut-unstage")) {
            ImageEngine engine = fx.engine;
            NodeStorage nodeSide = fx.node;
            String vol = fx.stagedAndPublished("before the cut");
            Path staging = fx.staging(vol);
            Path target = fx.target(vol);

            // a thread each: the common pool may have one worker on a small machine, which would queue the clean-up
            java.util.concurrent.Executor ownThread = r -> Thread.ofPlatform().start(r);
            CountDownLatch frozen = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            var cut = CompletableFuture.runAsync(() -> engine.freezer().cut(List.of(vol), () -> {
                frozen.countDown();
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }), ownThread);
            try {
                assertTrue(frozen.await(30, TimeUnit.SECONDS), "the cut froze the staged filesystem");
                var cleanUp = CompletableFuture.runAsync(() -> {
                    nodeSide.unpublish(vol, target);
                    nodeSide.unstage(vol, staging);
                }, ownThread);
                Thread.sleep(500);
                assertFalse(cleanUp.isDone(), "waits for the cut (it holds the filesystem open): not an EBUSY answer");
                release.countDown();
                cut.get(30, TimeUnit.SECONDS);
                cleanUp.get(30, TimeUnit.SECONDS);
            } finally {
                // never leave a freeze behind (a frozen filesystem unmounted lazily stays frozen in the kernel)
                release.countDown();
                cut.get(90, TimeUnit.SECONDS);
                if (MountTable.read().at(target).isPresent()) nodeSide.unpublish(vol, target);
                if (MountTable.read().at(staging).isPresent()) nodeSide.unstage(vol, staging);
            }
            assertTrue(MountTable.read().under(fx.nodeDir).isEmpty(), MountTable.read().under(fx.nodeDir).toString());
            assertEquals(List.of(), LoopDevice.findByBackingFile(fx.image(vol)));
            engine.deleteVolume(vol);
        }
    }
}
