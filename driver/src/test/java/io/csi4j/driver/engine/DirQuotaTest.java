package io.csi4j.driver.engine;

import static io.csi4j.driver.engine.ImageEngineLifecycleTest.snapshotId;
import static io.csi4j.driver.engine.ImageEngineLifecycleTest.volumeId;
import static io.csi4j.driver.engine.TestPool.node;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.os.ProjectQuota;
import io.csi4j.driver.testing.LeakCheck;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Hard capacity of directory volumes on a real XFS mounted {@code prjquota} (a loop image made and removed here):
 * a real write past the capacity fails inside the published volume (ENOSPC: XFS's answer for a project quota), stats are the quota's, an expand raises
 * the limit online, a delete removes the limit and frees the id, a restore gets its own id, a reopened engine keeps
 * (and repairs) the limits. Root only; fails rather than skips under CI=true.
 */
@ExtendWith(LeakCheck.class)
class DirQuotaTest {
    private static final long MIB = 1 << 20;
    private static final PublishOptions RW = new PublishOptions(false, false, List.of(), OptionalInt.empty());

    /**
     * Whether this kernel can mount XFS with quotas at all: a kernel built without CONFIG_XFS_QUOTA refuses
     * {@code prjquota} with EINVAL ("quota support not available in this kernel"). Read from /proc/config.gz; a kernel
     * that does not publish its config is assumed able, so that the test tries and fails loudly.
     */
    static boolean kernelHasXfsQuota() {
        Path config = Path.of("/proc/config.gz");
        if (!Files.exists(config)) return true;
        try (var in = new java.util.zip.GZIPInputStream(Files.newInputStream(config))) {
            String text = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            return !text.contains("# CONFIG_XFS_QUOTA is not set");
        } catch (IOException e) {
            return true;
        }
    }

    private static TestPool quotaPool() {
        // not a root or tool gap (those fail under CI=true in TestPool.create): the kernel itself has no XFS quotas
        Assumptions.assumeTrue(kernelHasXfsQuota(), "this kernel is built without CONFIG_XFS_QUOTA: XFS cannot mount prjquota");
        return TestPool.create("xfs", 512 * MIB, List.of(), "prjquota");
    }

    /** Writes {@code bytes} into a new file in 1 MiB fsynced pieces; the bytes written before a failure, and the failure. */
    private static long fill(Path file, long bytes) throws IOException {
        ByteBuffer chunk = ByteBuffer.allocate((int) MIB);
        long written = 0;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            while (written < bytes) {
                chunk.clear();
                while (chunk.hasRemaining()) written += ch.write(chunk);
                ch.force(true);
            }
        }
        return written;
    }

    /**
     * The write refused at the project's hard limit. XFS reports an exhausted project quota as a full filesystem,
     * ENOSPC (xfs_trans_dqresv), not EDQUOT as user and group quotas and ext4's project quota do; either is the
     * limit, and nothing else in this test can fill a 512 MiB filesystem.
     */
    private static void assertQuotaFull(IOException e) {
        String message = String.valueOf(e.getMessage());
        assertTrue(message.contains("No space left on device") || message.contains("Disk quota exceeded"),
                "ENOSPC (XFS project quota) or EDQUOT expected, got " + e);
    }

    private static Path publish(TestPool test, DirEngine engine, String vol) {
        node(engine).stage(vol, test.staging(vol), new StageOptions.Mount("", List.of(), 0));
        Path target = test.target(vol);
        node(engine).publish(vol, test.staging(vol), target, RW);
        return target;
    }

    private static void unpublish(TestPool test, DirEngine engine, String vol) {
        node(engine).unpublish(vol, test.target(vol));
        node(engine).unstage(vol, test.staging(vol));
    }

    @Test
    void capacityIsAHardLimitThatGrowsAndGoesWithTheVolume() throws Exception {
        try (TestPool test = quotaPool(); DirEngine engine = test.dirEngine()) {
            assertTrue(engine.enforcesCapacity(), "XFS mounted prjquota enforces project quotas");
            assertTrue(engine.notices().stream().anyMatch(n -> n.contains("enforced as a hard limit")), engine.notices().toString());
            String vol = volumeId();
            engine.createVolume(vol, 8 * MIB, AccessType.mount(""), Label.NONE);
            int id = engine.projectId(vol).orElseThrow();
            assertTrue(ProjectIds.ours(id), "id " + id);
            assertEquals(id, ProjectQuota.projectOf(engine.dir(vol)));
            assertEquals(8 * MIB, ProjectQuota.usage(test.pool.path(), id).limitBytes());

            Path target = publish(test, engine, vol);
            assertQuotaFull(assertThrows(IOException.class, () -> fill(target.resolve("big"), 32 * MIB)));
            VolumeStats stats = node(engine).stats(vol, target);
            assertEquals(8 * MIB, stats.totalBytes());
            assertTrue(stats.usedBytes() >= 4 * MIB && stats.usedBytes() <= 8 * MIB, "used " + stats.usedBytes());
            assertEquals(8 * MIB - stats.usedBytes(), stats.availableBytes());
            Files.delete(target.resolve("big"));

            // online expansion: published all along
            // (32: room for "big" too, whose blocks XFS may free in the background after the unlink)
            assertEquals(32 * MIB, engine.expandVolume(vol, 32 * MIB));
            assertEquals(32 * MIB, node(engine).stats(vol, target).totalBytes());
            assertEquals(16 * MIB, fill(target.resolve("more"), 16 * MIB), "16 MiB fit under the raised limit");
            assertQuotaFull(assertThrows(IOException.class, () -> fill(target.resolve("too-much"), 24 * MIB)));
            assertTrue(node(engine).stats(vol, target).usedBytes() >= 16 * MIB);

            unpublish(test, engine, vol);
            engine.deleteVolume(vol);
            assertEquals(OptionalInt.empty(), engine.projectId(vol), "the id is free");
            assertEquals(0, ProjectQuota.usage(test.pool.path(), id).limitBytes(), "limit removed");
            // unlinked inodes are freed by a background worker on XFS: bounded wait for the count to reach 0
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (ProjectQuota.usage(test.pool.path(), id).usedBytes() != 0 && System.nanoTime() < deadline) Thread.sleep(100);
            assertEquals(0, ProjectQuota.usage(test.pool.path(), id).usedBytes(), "nothing counted any more");
            assertEquals(List.of(), test.leftovers());
        }
    }

    @Test
    void restoresAndClonesGetTheirOwnIdAndLimit() throws Exception {
        try (TestPool test = quotaPool(); DirEngine engine = test.dirEngine()) {
            String vol = volumeId(), snap = snapshotId(), restored = volumeId(), clone = volumeId();
            engine.createVolume(vol, 8 * MIB, AccessType.mount(""), Label.NONE);
            Files.createDirectories(engine.dir(vol).resolve("sub"));
            Files.write(engine.dir(vol).resolve("sub").resolve("data"), new byte[(int) (3 * MIB)]);
            engine.createSnapshot(snap, vol, Label.NONE);
            engine.restoreSnapshot(restored, snap, 16 * MIB, AccessType.mount(""), Label.NONE);
            engine.cloneVolume(clone, vol, 0, AccessType.mount(""), Label.NONE);

            int source = engine.projectId(vol).orElseThrow();
            for (String copy : List.of(restored, clone)) {
                int id = engine.projectId(copy).orElseThrow();
                assertNotEquals(source, id);
                assertEquals(id, ProjectQuota.projectOf(engine.dir(copy).resolve("sub")), "the copied tree is tagged");
                ProjectQuota.Usage usage = ProjectQuota.usage(test.pool.path(), id);
                assertTrue(usage.usedBytes() >= 3 * MIB, copy + " counts its copy: " + usage);
            }
            assertEquals(16 * MIB, ProjectQuota.usage(test.pool.path(), engine.projectId(restored).orElseThrow()).limitBytes());
            assertEquals(8 * MIB, ProjectQuota.usage(test.pool.path(), engine.projectId(clone).orElseThrow()).limitBytes());
            assertTrue(ProjectQuota.usage(test.pool.path(), source).usedBytes() >= 3 * MIB, "the source still counts its own");
            // a file written in the restored volume counts against its limit, not the source's
            Path target = publish(test, engine, restored);
            assertThrows(IOException.class, () -> fill(target.resolve("big"), 16 * MIB));
            unpublish(test, engine, restored);
            for (String v : List.of(vol, restored, clone)) engine.deleteVolume(v);
            engine.deleteSnapshot(snap);
        }
    }

    @Test
    void aReopenedEngineKeepsTheLimitsAndRepairsAnyLeftShort() throws Exception {
        try (TestPool test = quotaPool()) {
            String kept = volumeId(), untagged = volumeId(), unlimited = volumeId();
            int keptId, unlimitedId;
            try (DirEngine engine = test.dirEngine()) {
                for (String v : List.of(kept, untagged, unlimited)) engine.createVolume(v, 8 * MIB, AccessType.mount(""), Label.NONE);
                keptId = engine.projectId(kept).orElseThrow();
                unlimitedId = engine.projectId(unlimited).orElseThrow();
                // what a crash can leave: a directory made but not yet tagged (its limit set, the tag lost), a limit lost
                ProjectQuota.assign(engine.dir(untagged), 0);
                ProjectQuota.limit(test.pool.path(), unlimitedId, 0);
            }
            try (DirEngine engine = test.dirEngine()) {
                assertEquals(OptionalInt.of(keptId), engine.projectId(kept), "ids are read back from the directories");
                assertEquals(OptionalInt.of(unlimitedId), engine.projectId(unlimited));
                int repaired = engine.projectId(untagged).orElseThrow();
                assertFalse(repaired == keptId || repaired == unlimitedId);
                for (String v : List.of(kept, untagged, unlimited)) {
                    int id = engine.projectId(v).orElseThrow();
                    assertEquals(8 * MIB, ProjectQuota.usage(test.pool.path(), id).limitBytes(), v);
                    Path target = publish(test, engine, v);
                    assertQuotaFull(assertThrows(IOException.class, () -> fill(target.resolve("big"), 16 * MIB), v));
                    unpublish(test, engine, v);
                    engine.deleteVolume(v);
                }
            }
        }
    }

    /** The id and PROJINHERIT go on the inode whether or not quotas are on (XFS keeps project ids regardless). */
    @Test
    void projectIdsAreKeptOnTheDirectoryInode() throws Exception {
        try (TestPool test = TestPool.create("xfs", 512 * MIB)) {
            Path dir = Files.createDirectory(test.pool.path().resolve("tagged"));
            assertEquals(0, ProjectQuota.projectOf(dir));
            ProjectQuota.assign(dir, ProjectIds.FIRST + 7);
            assertEquals(ProjectIds.FIRST + 7, ProjectQuota.projectOf(dir));
            Path child = Files.createDirectory(dir.resolve("child"));
            Files.write(dir.resolve("file"), new byte[10]);
            assertEquals(ProjectIds.FIRST + 7, ProjectQuota.projectOf(child), "inherited (PROJINHERIT)");
            assertEquals(ProjectIds.FIRST + 7, ProjectQuota.projectOf(dir.resolve("file")), "inherited (PROJINHERIT)");
            assertFalse(ProjectQuota.enforced(test.pool.path()), "mounted without prjquota: not enforced");
        }
    }

    @Test
    void withoutProjectQuotasCapacityIsOnlyRecordedAndSaidSo() throws Exception {
        try (TestPool test = TestPool.create("xfs", 512 * MIB); DirEngine engine = test.dirEngine()) {
            assertFalse(engine.enforcesCapacity());
            assertTrue(engine.notices().stream().anyMatch(n -> n.contains("NOT enforced") && n.contains("prjquota")), engine.notices().toString());
            String vol = volumeId();
            engine.createVolume(vol, 4 * MIB, AccessType.mount(""), Label.NONE);
            assertEquals(OptionalInt.empty(), engine.projectId(vol));
            assertEquals(0, ProjectQuota.projectOf(engine.dir(vol)));
            Path target = publish(test, engine, vol);
            assertEquals(8 * MIB, fill(target.resolve("past-capacity"), 8 * MIB), "no limit: the pool's free space is the bound");
            unpublish(test, engine, vol);
            engine.deleteVolume(vol);
        }
    }
}
