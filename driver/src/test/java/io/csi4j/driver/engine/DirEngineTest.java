package io.csi4j.driver.engine;

import static io.csi4j.driver.engine.TestPool.node;
import static io.csi4j.driver.engine.ImageEngineLifecycleTest.snapshotId;
import static io.csi4j.driver.engine.ImageEngineLifecycleTest.volumeId;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.csi.StorageStatus;
import io.csi4j.driver.storage.StorageException;
import io.grpc.Status;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The dir engine on real pools: tree snapshots with per-file reflink, bind publishing, group refusal. */
@ExtendWith(LeakCheck.class)
class DirEngineTest {
    private static final long MIB = 1 << 20;
    private static final PublishOptions RW = new PublishOptions(false, false, List.of(), OptionalInt.empty());
    private static final PublishOptions RO = new PublishOptions(false, true, List.of(), OptionalInt.empty());

    private static Status.Code code(Runnable call) {
        return StorageStatus.code(assertThrows(StorageException.class, call::run).reason());
    }

    /** Every entry of a tree, not following symlinks: type, owner, mode, and content hash or link target. */
    static Map<String, String> describe(Path root) throws IOException {
        Map<String, String> entries = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.toList()) {
                String rel = root.relativize(p).toString();
                Map<String, Object> a = Files.readAttributes(p, "unix:mode,uid,gid,size", LinkOption.NOFOLLOW_LINKS);
                String what;
                if (Files.isSymbolicLink(p)) what = "link->" + Files.readSymbolicLink(p);
                else if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) what = "dir";
                else what = "file:" + a.get("size") + ":" + sha256(p);
                entries.put(rel, what + " " + a.get("uid") + ":" + a.get("gid")
                        + (Files.isSymbolicLink(p) ? "" : " " + Integer.toOctalString((Integer) a.get("mode") & 07777)));
            }
        }
        return entries;
    }

    private static String sha256(Path file) throws IOException {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file))).substring(0, 16);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The provisioned total is kept as volumes come and go (not re-read from every sidecar), and recounted at open. */
    @org.junit.jupiter.api.Test
    void provisionedBytesFollowEveryChangeAndSurviveReopening() throws Exception {
        try (TestPool test = TestPool.create("xfs", 512 * MIB)) {
            String a = volumeId(), b = volumeId(), c = volumeId(), s = snapshotId();
            try (DirEngine engine = test.dirEngine()) {
                long base = engine.pool().provisionedBytes();
                engine.createVolume(a, 10 * MIB, AccessType.mount(""), Label.NONE);
                engine.createVolume(b, 20 * MIB, AccessType.mount(""), Label.NONE);
                engine.createVolume(b, 20 * MIB, AccessType.mount(""), Label.NONE);      // a repeat counts once
                assertEquals(base + 30 * MIB, engine.pool().provisionedBytes());
                engine.expandVolume(a, 15 * MIB);
                engine.createSnapshot(s, b, Label.NONE);
                engine.restoreSnapshot(c, s, 25 * MIB, AccessType.mount(""), Label.NONE);
                assertEquals(base + 60 * MIB, engine.pool().provisionedBytes());
                engine.deleteVolume(b);
                engine.deleteVolume(b);                                        // a repeat frees nothing more
                assertEquals(base + 40 * MIB, engine.pool().provisionedBytes());
                engine.deleteSnapshot(s);
            }
            try (DirEngine reopened = test.dirEngine()) {
                assertEquals(40 * MIB, reopened.pool().provisionedBytes() - 0, "recounted from the sidecars at open");
                reopened.deleteVolume(a);
                reopened.deleteVolume(c);
                assertEquals(0, reopened.pool().provisionedBytes());
            }
        }
    }

    @ParameterizedTest(name = "dir volumes on a {0} pool")
    @ValueSource(strings = {"xfs", "ext4"})
    void treesSnapshotRestoreCloneAndPublish(String poolFs) throws Exception {
        try (TestPool test = TestPool.create(poolFs, 512 * MIB); DirEngine engine = test.dirEngine()) {
            assertEquals(poolFs.equals("xfs"), engine.pool().reflink());
            assertFalse(engine.supportsBlock());
            assertEquals(Status.Code.INVALID_ARGUMENT, code(() -> engine.createVolume(volumeId(), MIB, AccessType.BLOCK, Label.NONE)));

            String vol = volumeId();
            assertEquals(1024 * MIB, engine.createVolume(vol, 1024 * MIB, AccessType.mount(""), Label.NONE));
            assertEquals(1024 * MIB, engine.createVolume(vol, 1024 * MIB, AccessType.mount(""), Label.NONE));
            PoolInfo info = engine.pool();
            assertEquals(1024 * MIB, info.provisionedBytes(), "recorded");
            assertEquals(info.availableBytes(), info.allocatableBytes(), "not enforced: promises more than the pool holds");
            node(engine).stage(vol, test.staging(vol), new StageOptions.Mount("", List.of(), 0));
            Path target = test.target(vol);
            node(engine).publish(vol, test.staging(vol), target, new PublishOptions(false, false, List.of("nosuid"), OptionalInt.of(4242)));
            node(engine).publish(vol, test.staging(vol), target, new PublishOptions(false, false, List.of("nosuid"), OptionalInt.of(4242)));
            MountInfo bind = MountTable.read().at(target).orElseThrow();
            assertTrue(bind.root().endsWith("/volumes/" + vol + ".dir"), "a bind of the volume directory: " + bind.root());
            assertTrue(bind.mountOptions().contains("nosuid"), bind.mountOptions().toString());
            assertEquals(4242, Files.getAttribute(target, "unix:gid"));
            assertTrue(ImageEngineLifecycleTest.asUser(4242, "mkdir", target.resolve("by-member")), "a mount-group member can write");
            assertFalse(ImageEngineLifecycleTest.asUser(1000, "mkdir", target.resolve("by-stranger")));
            Files.delete(target.resolve("by-member"));
            assertTrue(engine.inUse(vol));
            assertEquals(List.of(target), node(engine).mountPoints(vol));

            // a tree written through the publication
            Files.createDirectories(target.resolve("a/b/c"));
            Pattern.write(target.resolve("a/big"), 0, 11, 8 << 20);
            Files.writeString(target.resolve("a/b/c/small"), "nested");
            Files.setAttribute(target.resolve("a/b/c/small"), "unix:uid", 1234);
            Files.setAttribute(target.resolve("a/b/c/small"), "unix:gid", 5678);
            Files.setAttribute(target.resolve("a/b/c/small"), "unix:mode", 0640);
            Files.setAttribute(target.resolve("a/b"), "unix:mode", 02750);
            Files.createSymbolicLink(target.resolve("escape"), Path.of("/etc/passwd"));
            Files.createSymbolicLink(target.resolve("a/relative"), Path.of("b/c/small"));
            Map<String, String> tree = describe(target);

            Map<String, String> group = Map.of(snapshotId(), vol);
            assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> engine.createGroupSnapshot(group, Label.NONE, null)), "published writable");
            assertEquals(List.of(), List.copyOf(engine.snapshotArtifacts()));

            String snap = snapshotId();
            long before = test.pool.stats().availableBytes();
            assertEquals(1024 * MIB, engine.createSnapshot(snap, vol, Label.NONE));
            assertEquals(1024 * MIB, engine.createSnapshot(snap, vol, Label.NONE));
            long used = before - test.pool.stats().availableBytes();
            if (poolFs.equals("xfs")) assertTrue(used < 2 * MIB, "per-file reflink shares the data: " + used);
            else assertTrue(used >= 8 * MIB, "a copy allocates the data: " + used);
            assertEquals(tree, describe(test.pool.path().resolve("snapshots/" + snap + ".dir")));

            String restored = volumeId();
            assertEquals(2048 * MIB, engine.restoreSnapshot(restored, snap, 2048 * MIB, AccessType.mount(""), Label.NONE));
            assertEquals(Status.Code.OUT_OF_RANGE, code(() -> engine.restoreSnapshot(volumeId(), snap, MIB, AccessType.mount(""), Label.NONE)));
            Path restoredTarget = test.target(restored);
            node(engine).publish(restored, test.staging(restored), restoredTarget, RO);
            assertEquals(tree, describe(restoredTarget));
            assertTrue(Files.isSymbolicLink(restoredTarget.resolve("escape")), "a symlink is copied as a symlink, never followed");
            assertEquals(Status.Code.ALREADY_EXISTS, code(() -> node(engine).publish(restored, test.staging(restored), restoredTarget, RW)));

            Files.writeString(target.resolve("later"), "after the snapshot");
            String clone = volumeId();
            engine.cloneVolume(clone, vol, 0, AccessType.mount(""), Label.NONE);
            assertEquals(describe(target), describe(test.pool.path().resolve("volumes/" + clone + ".dir")));

            assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> engine.deleteVolume(vol)), "published");
            assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> node(engine).unstage(vol, test.staging(vol))), "published");
            node(engine).unpublish(vol, target);
            node(engine).unpublish(vol, target);
            assertFalse(Files.exists(target, LinkOption.NOFOLLOW_LINKS));
            node(engine).unstage(vol, test.staging(vol));
            assertFalse(engine.inUse(vol));

            // unpublished, and a read-only publication cannot write: the group is consistent
            Map<String, String> members = new LinkedHashMap<>();
            members.put(snapshotId(), vol);
            members.put(snapshotId(), restored);
            assertEquals(2, engine.createGroupSnapshot(members, Label.NONE, null).size());
            assertEquals(2048 * MIB, engine.expandVolume(restored, 1024 * MIB), "never shrinks");
            assertEquals(4096 * MIB, engine.expandVolume(restored, 4096 * MIB));
            assertEquals(4096 * MIB, node(engine).nodeExpand(restored, restoredTarget));
            assertEquals(4096 * MIB, engine.artifact(Artifact.Kind.VOLUME, restored).orElseThrow().sizeBytes());
            assertTrue(node(engine).stats(restored, restoredTarget).totalBytes() > 0);

            node(engine).unpublish(restored, restoredTarget);
            assertEquals(List.of(), test.leftovers());
            for (String id : List.of(vol, restored, clone)) {
                engine.deleteVolume(id);
                engine.deleteVolume(id);
            }
            for (String id : engine.snapshotArtifacts()) engine.deleteSnapshot(id);
            assertEquals(List.of(), List.copyOf(engine.volumeArtifacts()));
            assertEquals(List.of(), List.copyOf(engine.snapshotArtifacts()));
            assertEquals(List.of(), engine.removeTemporaryArtifacts());
            assertTrue(Files.exists(Path.of("/etc/passwd")), "deleting trees never follows their symlinks");
        }
    }
}
