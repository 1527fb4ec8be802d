package io.csi4j.driver.engine;

import static io.csi4j.driver.engine.TestPool.node;
import static io.csi4j.driver.engine.ImageEngineLifecycleTest.snapshotId;
import static io.csi4j.driver.engine.ImageEngineLifecycleTest.volumeId;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.csi.StorageStatus;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.os.BlockDevice;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountFlag;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.Mounts;
import io.csi4j.driver.os.Tools;
import io.csi4j.driver.storage.StorageException;
import io.csi4j.driver.testing.LeakCheck;
import io.grpc.Status;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import io.csi4j.driver.engine.image.ImageEngine;

/** The image engine's edges: group consistency, refusals, idempotency, conditions, modify, sweeping. */
@ExtendWith(LeakCheck.class)
class ImageEngineTest {
    private static final long MIB = 1 << 20;
    private static final StageOptions.Mount EXT4 = new StageOptions.Mount("ext4", List.of(), 0);

    private static Status.Code code(Runnable call) {
        return StorageStatus.code(assertThrows(StorageException.class, call::run).reason());
    }

    /**
     * The property: a group snapshot taken while a writer appends sequence-numbered records
     * to several member volumes restores to a state where no volume holds a record newer than a
     * record missing from another. Record n goes to volume n % 3, each written synchronously before
     * the next starts, so the records present after a restore must be exactly 0..k for some k.
     */
    @Test
    void groupSnapshotIsWriteOrderConsistent() throws Exception {
        try (TestPool test = TestPool.create("xfs", 1024 * MIB); ImageEngine engine = test.imageEngine(1.0)) {
            List<String> volumes = List.of(volumeId(), volumeId(), volumeId());
            List<FileChannel> logs = new ArrayList<>();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong written = new AtomicLong();
            try {
                for (String vol : volumes) {
                    engine.createVolume(vol, 64 * MIB, AccessType.mount("ext4"), Label.NONE);
                    node(engine).stage(vol, test.staging(vol), EXT4);
                    logs.add(FileChannel.open(test.staging(vol).resolve("log"), StandardOpenOption.CREATE,
                            StandardOpenOption.WRITE, StandardOpenOption.APPEND, StandardOpenOption.DSYNC));
                }
                CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                    try {
                        for (long seq = 0; !stop.get(); seq++) {
                            logs.get((int) (seq % 3)).write(ByteBuffer.wrap((seq + "\n").getBytes(StandardCharsets.US_ASCII)));
                            written.set(seq + 1);
                        }
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, r -> Thread.ofPlatform().daemon().name("sequence-writer").start(r));

                while (written.get() < 300) Thread.sleep(5);
                Map<String, String> group = new LinkedHashMap<>();
                for (String vol : volumes) group.put(snapshotId(), vol);
                long before = written.get();
                engine.createGroupSnapshot(group, Label.NONE, null);
                long after = written.get();
                long target = after + 100;
                while (written.get() < target) Thread.sleep(5);
                stop.set(true);
                writer.get(30, TimeUnit.SECONDS);

                TreeSet<Long> present = new TreeSet<>();
                for (Map.Entry<String, String> member : group.entrySet()) {
                    String restored = volumeId();
                    engine.restoreSnapshot(restored, member.getKey(), 0, AccessType.mount("ext4"), Label.NONE);
                    node(engine).stage(restored, test.staging(restored), EXT4);
                    for (String line : Files.readAllLines(test.staging(restored).resolve("log"))) present.add(Long.parseLong(line));
                    node(engine).unstage(restored, test.staging(restored));
                    engine.deleteVolume(restored);
                }
                long newest = present.last();
                assertTrue(newest + 1 >= before && newest < after + 1, "cut between " + before + " and " + after + ": " + newest);
                assertEquals(newest + 1, present.size(), "records 0.." + newest + " with none missing; missing: "
                        + missing(present));
                group.keySet().forEach(engine::deleteSnapshot);
            } finally {
                stop.set(true);
                for (FileChannel log : logs) log.close();
                for (String vol : volumes) node(engine).unstage(vol, test.staging(vol));
            }
            assertEquals(List.of(), test.leftovers());
        }
    }

    private static List<Long> missing(TreeSet<Long> present) {
        List<Long> missing = new ArrayList<>();
        for (long i = 0; i < present.last() && missing.size() < 10; i++) if (!present.contains(i)) missing.add(i);
        return missing;
    }

    @Test
    void aFailedGroupSnapshotLeavesNoMemberAndThaws() throws Exception {
        try (TestPool test = TestPool.create("xfs", 512 * MIB); ImageEngine engine = test.imageEngine(1.0)) {
            String a = volumeId();
            engine.createVolume(a, 32 * MIB, AccessType.mount("ext4"), Label.NONE);
            node(engine).stage(a, test.staging(a), EXT4);
            try {
                Map<String, String> group = new LinkedHashMap<>();
                group.put(snapshotId(), a);
                group.put(snapshotId(), volumeId()); // does not exist
                assertEquals(Status.Code.NOT_FOUND, code(() -> engine.createGroupSnapshot(group, Label.NONE, null)));
                assertEquals(List.of(), List.copyOf(engine.snapshotArtifacts()));

                // frozen by someone else (another cut in flight): retry later, nothing left behind
                try (io.csi4j.driver.os.Freeze.Frozen held = io.csi4j.driver.os.Freeze.freeze(test.staging(a))) {
                    assertEquals(Status.Code.ABORTED, code(() -> engine.createSnapshot(snapshotId(), a, Label.NONE)));
                }
                assertEquals(List.of(), List.copyOf(engine.snapshotArtifacts()));
                assertEquals(List.of(), engine.removeTemporaryArtifacts());

                // a snapshot cut alone of a member, left by an interrupted group cut: the retry cuts all again
                String b = volumeId();
                engine.createVolume(b, 32 * MIB, AccessType.mount("ext4"), Label.NONE);
                Map<String, String> retried = new LinkedHashMap<>();
                retried.put(snapshotId(), a);
                retried.put(snapshotId(), b);
                String stale = retried.keySet().iterator().next();
                engine.createSnapshot(stale, a, Label.NONE);
                Files.writeString(test.staging(a).resolve("after"), "written after the stale cut");
                engine.createGroupSnapshot(retried, Label.NONE, null);
                String restored = volumeId();
                engine.restoreSnapshot(restored, stale, 0, AccessType.mount("ext4"), Label.NONE);
                node(engine).stage(restored, test.staging(restored), EXT4);
                assertTrue(Files.exists(test.staging(restored).resolve("after")), "the member was cut again with the group");
                node(engine).unstage(restored, test.staging(restored));

                // thawed: writes go through at once
                CompletableFuture<Void> write = CompletableFuture.runAsync(() -> {
                    try {
                        Pattern.write(test.staging(a).resolve("thawed"), 0, 1, 4096);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                write.get(10, TimeUnit.SECONDS);
            } finally {
                node(engine).unstage(a, test.staging(a));
            }
            assertEquals(List.of(), test.leftovers());
        }
    }

    /** A copy that runs out of space half-way through a group: no member survives, the frozen one is thawed. */
    @Test
    void aGroupCutThatRunsOutOfSpaceLeavesNothingAndThaws() throws Exception {
        try (TestPool test = TestPool.create("ext4", 512 * MIB); ImageEngine engine = test.imageEngine(2.0)) {
            String small = volumeId();
            String big = volumeId();
            engine.createVolume(small, 32 * MIB, AccessType.mount("ext4"), Label.NONE);
            engine.createVolume(big, 400 * MIB, AccessType.BLOCK, Label.NONE);
            Path bigImage = test.pool.path().resolve("volumes/" + big + ".img");
            for (int i = 0; i < 300; i++) Pattern.write(bigImage, i * MIB, i, (int) MIB); // 300 MiB of data to copy
            node(engine).stage(small, test.staging(small), EXT4);
            try {
                Map<String, String> group = new LinkedHashMap<>();
                group.put(snapshotId(), small);
                group.put(snapshotId(), big);
                StorageException e = assertThrows(StorageException.class, () -> engine.createGroupSnapshot(group, Label.NONE, null));
                assertEquals(Status.Code.RESOURCE_EXHAUSTED, StorageStatus.code(e.reason()), e.getMessage());
                assertEquals(List.of(), List.copyOf(engine.snapshotArtifacts()));
                assertEquals(List.of(), engine.removeTemporaryArtifacts(), "no temp file or sidecar left either");
                CompletableFuture.runAsync(() -> {
                    try {
                        Pattern.write(test.staging(small).resolve("thawed"), 0, 1, 4096);
                    } catch (Exception x) {
                        throw new IllegalStateException(x);
                    }
                }).get(10, TimeUnit.SECONDS);
            } finally {
                node(engine).unstage(small, test.staging(small));
            }
            assertEquals(List.of(), test.leftovers());
        }
    }

    @Test
    void refusesWhatWouldDestroyData() throws Exception {
        try (TestPool test = TestPool.create("xfs", 512 * MIB); ImageEngine engine = test.imageEngine(1.0)) {
            String vol = volumeId();
            engine.createVolume(vol, 32 * MIB, AccessType.mount("ext4"), Label.NONE);
            Path staging = test.staging(vol);
            node(engine).stage(vol, staging, EXT4);
            node(engine).unstage(vol, staging);
            assertEquals(Status.Code.FAILED_PRECONDITION,
                    code(() -> node(engine).stage(vol, staging, new StageOptions.Mount("xfs", List.of(), 0))), "holds ext4, not xfs");
            assertEquals(Status.Code.INVALID_ARGUMENT, code(() -> node(engine).stage(vol, staging, new StageOptions.Mount("ntfs", List.of(), 0))));
            assertEquals(Status.Code.INVALID_ARGUMENT, code(() -> engine.createVolume(volumeId(), MIB, AccessType.mount("btrfs"), Label.NONE)));
            assertEquals(Status.Code.INVALID_ARGUMENT,
                    code(() -> node(engine).stage(vol, staging, new StageOptions.Mount("ext4", List.of("bind"), 0))));
            assertEquals(List.of(), test.leftovers());

            // bytes without a filesystem (a block volume staged as a filesystem): never formatted over
            String raw = volumeId();
            engine.createVolume(raw, 16 * MIB, AccessType.BLOCK, Label.NONE);
            Path image = test.pool.path().resolve("volumes/" + raw + ".img");
            Pattern.write(image, 8 * MIB, 5, 4096);
            assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> node(engine).stage(raw, test.staging(raw), EXT4)));
            Pattern.assertHolds(image, 8 * MIB, 5, 4096);
            assertEquals(List.of(), test.leftovers());

            assertEquals(Status.Code.NOT_FOUND, code(() -> node(engine).stage(volumeId(), staging, EXT4)));
            assertEquals(Status.Code.NOT_FOUND, code(() -> engine.createSnapshot(snapshotId(), volumeId(), Label.NONE)));
            assertEquals(Status.Code.NOT_FOUND, code(() -> engine.restoreSnapshot(volumeId(), snapshotId(), 0, AccessType.BLOCK, Label.NONE)));
            assertEquals(Status.Code.NOT_FOUND, code(() -> engine.cloneVolume(volumeId(), volumeId(), 0, AccessType.BLOCK, Label.NONE)));
            assertEquals(Status.Code.NOT_FOUND, code(() -> engine.expandVolume(volumeId(), MIB)));
            assertEquals(Status.Code.ALREADY_EXISTS, code(() -> engine.createVolume(vol, 64 * MIB, AccessType.mount("ext4"), Label.NONE)));
            String snap = snapshotId();
            engine.createSnapshot(snap, vol, Label.NONE);
            assertEquals(Status.Code.ALREADY_EXISTS, code(() -> engine.createSnapshot(snap, raw, Label.NONE)), "same id, other volume");
            assertEquals(Status.Code.OUT_OF_RANGE, code(() -> engine.restoreSnapshot(volumeId(), snap, 16 * MIB, AccessType.mount(""), Label.NONE)));
            assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> node(engine).publish(vol, staging, test.target(vol),
                    new PublishOptions(false, false, List.of(), OptionalInt.empty()))), "not staged");
            // unpublish and unstage of what is not there converge
            node(engine).unpublish(vol, test.target(vol));
            node(engine).unstage(vol, staging);
        }
    }

    @Test
    void thinCapacityHonoursTheOvercommitRatio() {
        try (TestPool test = TestPool.create("xfs", 512 * MIB)) {
            ImageEngine strict = test.imageEngine(1.0);
            PoolInfo info = strict.pool();
            assertTrue(info.allocatableBytes() > 400 * MIB && info.allocatableBytes() <= info.availableBytes(), info.toString());
            String big = volumeId();
            strict.createVolume(big, 400 * MIB, AccessType.BLOCK, Label.NONE);
            assertEquals(400 * MIB, strict.pool().provisionedBytes());
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, code(() -> strict.createVolume(volumeId(), 200 * MIB, AccessType.BLOCK, Label.NONE)));
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, code(() -> strict.expandVolume(big, 600 * MIB)));
            ImageEngine thin = test.imageEngine(3.0);
            assertTrue(thin.pool().allocatableBytes() > 900 * MIB, thin.pool().toString());
            thin.createVolume(volumeId(), 600 * MIB, AccessType.BLOCK, Label.NONE);
            assertTrue(test.pool.stats().availableBytes() > 400 * MIB, "thin: nothing allocated yet");
        }
    }

    @Test
    void modifyValidatesEverythingBeforeApplyingAnything() throws Exception {
        try (TestPool test = TestPool.create("btrfs", 512 * MIB); ImageEngine engine = test.imageEngine(1.0)) {
            String vol = volumeId();
            engine.createVolume(vol, 32 * MIB, AccessType.BLOCK, Label.NONE);
            node(engine).stage(vol, test.staging(vol), new StageOptions.Block(512));
            try {
                Path node = LoopDevice.findByBackingFile(test.pool.path().resolve("volumes/" + vol + ".img")).getFirst().node();
                assertEquals(1024, BlockDevice.readAheadSectors(node), "512 KiB from the stage");

                StorageException unknown = assertThrows(StorageException.class,
                        () -> engine.modifyVolume(vol, Map.of("readAheadKiB", "2048", "iops", "5")));
                assertEquals(Status.Code.INVALID_ARGUMENT, StorageStatus.code(unknown.reason()));
                assertTrue(unknown.getMessage().contains("iops") && unknown.getMessage().contains("compression"), unknown.getMessage());
                for (String bad : List.of("abc", "-1", "65537", "1.5")) {
                    assertEquals(Status.Code.INVALID_ARGUMENT, code(() -> engine.modifyVolume(vol, Map.of("readAheadKiB", bad))), bad);
                }
                assertEquals(Status.Code.INVALID_ARGUMENT,
                        code(() -> engine.modifyVolume(vol, Map.of("readAheadKiB", "2048", "compression", "gzip"))));
                assertEquals(1024, BlockDevice.readAheadSectors(node), "nothing applied");

                engine.modifyVolume(vol, Map.of("readAheadKiB", "2048", "compression", "zstd"));
                assertEquals(4096, BlockDevice.readAheadSectors(node));
                Tools.Result property = Tools.run(Duration.ofSeconds(30), "btrfs",
                        List.of("property", "get", test.pool.path().resolve("volumes/" + vol + ".img").toString(), "compression"));
                assertEquals("compression=zstd", property.stdout().strip());
            } finally {
                node(engine).unstage(vol, test.staging(vol));
            }
        }
        try (TestPool test = TestPool.create("xfs", 512 * MIB); ImageEngine engine = test.imageEngine(1.0)) {
            String vol = volumeId();
            engine.createVolume(vol, 32 * MIB, AccessType.BLOCK, Label.NONE);
            StorageException e = assertThrows(StorageException.class, () -> engine.modifyVolume(vol, Map.of("compression", "zstd")));
            assertEquals(Status.Code.INVALID_ARGUMENT, StorageStatus.code(e.reason()));
            assertTrue(e.getMessage().contains("btrfs"), e.getMessage());
        }
    }

    @Test
    void conditionsComeFromTheKernel() throws Exception {
        try (TestPool test = TestPool.create("xfs", 512 * MIB); ImageEngine engine = test.imageEngine(1.0)) {
            String vol = volumeId();
            engine.createVolume(vol, 32 * MIB, AccessType.mount("ext4"), Label.NONE);
            Path staging = test.staging(vol);
            node(engine).stage(vol, staging, new StageOptions.Mount("ext4", List.of("errors=remount-ro"), 0));
            assertTrue(engine.volumeCondition(vol).isEmpty());
            // ext4's debugging "abort" takes the error path: the filesystem turns read-only under the mount
            Mounts.mount(null, staging, null, EnumSet.of(MountFlag.REMOUNT), "abort");
            assertTrue(engine.volumeCondition(vol).orElseThrow().contains("read-only"), engine.volumeCondition(vol).toString());
            assertTrue(node(engine).stats(vol, staging).abnormal().isPresent());
            node(engine).unstage(vol, staging);

            String block = volumeId();
            engine.createVolume(block, 16 * MIB, AccessType.BLOCK, Label.NONE);
            node(engine).stage(block, test.staging(block), new StageOptions.Block(0));
            Path target = test.target(block);
            node(engine).publish(block, test.staging(block), target, new PublishOptions(true, false, List.of(), OptionalInt.empty()));
            assertTrue(node(engine).stats(block, target).abnormal().isEmpty());
            LoopDevice.findByBackingFile(test.pool.path().resolve("volumes/" + block + ".img")).forEach(LoopDevice::detach);
            assertTrue(node(engine).stats(block, target).abnormal().orElseThrow().contains("detached"), node(engine).stats(block, target).toString());
            node(engine).unpublish(block, target);
            node(engine).unstage(block, test.staging(block));

            Files.delete(test.pool.path().resolve("volumes/" + vol + ".img"));
            assertTrue(engine.volumeCondition(vol).orElseThrow().contains("missing"));
            assertEquals(Status.Code.NOT_FOUND, code(() -> node(engine).stats(vol, test.node.resolve("nowhere"))));
            assertEquals(List.of(), test.leftovers());
        }
    }

    @Test
    void sidecarsDescribeArtifactsAndTheSweepRemovesInterruptedWork() throws Exception {
        try (TestPool test = TestPool.create("xfs", 512 * MIB); ImageEngine engine = test.imageEngine(2.0)) {
            String vol = volumeId();
            engine.createVolume(vol, 20 * MIB, AccessType.mount("xfs"), Label.NONE);
            Artifact volume = engine.artifact(Artifact.Kind.VOLUME, vol).orElseThrow();
            assertEquals(new Artifact(vol, Artifact.Kind.VOLUME, "image", 300 * MIB, AccessType.mount("xfs"), "", // mkfs.xfs's minimum
                    volume.createdAt()), volume);
            String snap = snapshotId();
            engine.createSnapshot(snap, vol, Label.NONE);
            String restored = volumeId();
            engine.restoreSnapshot(restored, snap, 0, AccessType.mount("xfs"), Label.NONE);
            assertEquals(Artifact.volumeSource(vol), engine.artifact(Artifact.Kind.SNAPSHOT, snap).orElseThrow().source());
            assertEquals(Artifact.snapshotSource(snap), engine.artifact(Artifact.Kind.VOLUME, restored).orElseThrow().source());
            assertEquals(Artifact.parse(Files.readString(test.pool.path().resolve("volumes/" + vol + ".meta"))), volume);

            // a crash mid-create: a temp image in .tmp, a sidecar without its artifact
            Path tmp = test.pool.path().resolve(".tmp/" + volumeId() + ".img.deadbeef");
            Files.write(tmp, new byte[4096]);
            String interrupted = volumeId();
            Path orphan = test.pool.path().resolve("volumes/" + interrupted + ".meta");
            Files.writeString(orphan, volume.toJson());
            assertFalse(engine.volumeArtifacts().contains(interrupted), "a sidecar alone is not a volume");
            assertEquals(new TreeSet<>(List.of(vol, restored)), engine.volumeArtifacts());
            assertEquals(new TreeSet<>(List.of(tmp, orphan)), new TreeSet<>(engine.removeTemporaryArtifacts()));
            assertFalse(Files.exists(tmp));
            assertFalse(Files.exists(orphan));
            assertTrue(engine.volumeArtifacts().contains(vol) && engine.volumeArtifacts().contains(restored) && engine.snapshotArtifacts().contains(snap));
            assertEquals(List.of(), engine.removeTemporaryArtifacts());
        }
    }

    @Test
    void nodeOperationsWorkFromTheKernelAloneAfterARestart() throws Exception {
        try (TestPool test = TestPool.create("xfs", 512 * MIB)) {
            String vol = volumeId();
            Path staging = test.staging(vol);
            Path target = test.target(vol);
            try (ImageEngine first = test.imageEngine(1.0)) {
                first.createVolume(vol, 32 * MIB, AccessType.mount("ext4"), Label.NONE);
                node(first).stage(vol, staging, EXT4);
                node(first).publish(vol, staging, target, new PublishOptions(false, false, List.of(), OptionalInt.empty()));
                Files.writeString(target.resolve("kept"), "across a restart");
            }
            // a new engine (a restarted plugin) knows nothing but what the kernel says
            try (ImageEngine second = test.imageEngine(1.0)) {
                node(second).stage(vol, staging, EXT4);
                node(second).publish(vol, staging, target, new PublishOptions(false, false, List.of(), OptionalInt.empty()));
                assertEquals(1, MountTable.read().mounts().stream().filter(m -> m.mountPoint().equals(target)).count());
                assertTrue(second.inUse(vol));
                assertEquals(List.of(staging, target).stream().sorted().toList(), node(second).mountPoints(vol));
                assertEquals(Status.Code.ALREADY_EXISTS, code(() -> node(second).publish(vol, staging, target,
                        new PublishOptions(false, true, List.of(), OptionalInt.empty()))), "published read-write, not read-only");
                node(second).unpublish(vol, target);
                node(second).unstage(vol, staging);
                node(second).stage(vol, staging, EXT4);
                assertEquals("across a restart", Files.readString(staging.resolve("kept")));
                node(second).unstage(vol, staging);
                assertFalse(second.inUse(vol));
                assertEquals(List.of(), node(second).mountPoints(vol));
            }
            assertEquals(List.of(), test.leftovers());
        }
    }

    @Test
    void aSnapshotOfAnAttachedBlockVolumeHoldsWhatWasWrittenThroughTheDevice() throws Exception {
        try (TestPool test = TestPool.create("ext4", 512 * MIB); ImageEngine engine = test.imageEngine(1.0)) {
            String vol = volumeId();
            engine.createVolume(vol, 16 * MIB, AccessType.BLOCK, Label.NONE);
            node(engine).stage(vol, test.staging(vol), new StageOptions.Block(0));
            Path node = LoopDevice.findByBackingFile(test.pool.path().resolve("volumes/" + vol + ".img")).getFirst().node();
            try (FileChannel device = FileChannel.open(node, StandardOpenOption.WRITE)) {
                device.write(ByteBuffer.wrap(Pattern.bytes(3, 65536)), 0); // buffered, not fsync'ed
            }
            String snap = snapshotId();
            engine.createSnapshot(snap, vol, Label.NONE);
            assertArrayEquals(Pattern.bytes(3, 65536),
                    Pattern.read(test.pool.path().resolve("snapshots/" + snap + ".img"), 0, 65536), "flushed before the cut");
            node(engine).unstage(vol, test.staging(vol));
            assertEquals(List.of(), test.leftovers());
        }
    }
}
