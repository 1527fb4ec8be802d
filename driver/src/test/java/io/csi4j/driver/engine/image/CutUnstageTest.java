package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.DataPath;
import io.csi4j.driver.engine.NodeStorage;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.engine.PublishOptions;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
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
    private static final long MIB = 1 << 20;

    @Test
    void anUnpublishAndUnstageDuringACutWaitForItAndLeaveNothing() throws Exception {
        ScratchFilesystem.require("xfs");
        try (ScratchFilesystem scratch = ScratchFilesystem.create("xfs", 512 * MIB)) {
            LeakCheck.watch(scratch.dir());
            Path node = LeakCheck.watch(Files.createTempDirectory("csi4j-cut-unstage-"));
            Pool pool = Pool.open(new DataDir(scratch.mountPoint().resolve("data")), OptionalLong.empty());
            try (ImageEngine engine = ImageEngine.open(pool, new ImageEngine.Options(1.0, DataPath.CONFIGURED.volumeDirectIo()))) {
                NodeStorage nodeSide = engine.capability(NodeStorage.class).orElseThrow();
                String vol = ObjectId.generate(ObjectId.Kind.VOLUME, "node-1").toString();
                engine.createVolume(vol, 32 * MIB, AccessType.mount("ext4"), Label.NONE);
                Path staging = node.resolve("staging").resolve(vol);
                Path target = node.resolve("pods").resolve(vol).resolve("mount");
                nodeSide.stage(vol, staging, new StageOptions.Mount("ext4", List.of(), 0));
                nodeSide.publish(vol, staging, target, new PublishOptions(false, false, List.of(), java.util.OptionalInt.empty()));
                Files.writeString(target.resolve("kept"), "before the cut");

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
                assertTrue(MountTable.read().under(node).isEmpty(), MountTable.read().under(node).toString());
                assertEquals(List.of(), LoopDevice.findByBackingFile(pool.path().resolve("volumes/" + vol + ".img")));
                engine.deleteVolume(vol);
            } finally {
                LeakCheck.release(java.util.Set.of(node, scratch.mountPoint()));
                if (MountTable.read().under(node).isEmpty()) {
                    try (var paths = Files.walk(node)) {
                        for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
                    }
                }
            }
        }
    }
}
