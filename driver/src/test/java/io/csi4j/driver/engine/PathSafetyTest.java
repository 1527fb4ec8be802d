package io.csi4j.driver.engine;

import static io.csi4j.driver.engine.TestPool.node;
import static io.csi4j.driver.engine.ImageEngineLifecycleTest.snapshotId;
import static io.csi4j.driver.engine.ImageEngineLifecycleTest.volumeId;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.csi.StorageStatus;
import io.csi4j.driver.storage.StorageException;
import io.grpc.Status;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.function.Consumer;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * No id reaches outside the pool: hostile ids are refused before they become paths, and a symlink
 * planted under an artifact's name (or in place of a pool directory) is never followed, so nothing
 * outside is created, deleted, attached or mounted.
 */
@ExtendWith(LeakCheck.class)
class PathSafetyTest {
    private static final long MIB = 1 << 20;

    static final List<String> HOSTILE = Arrays.asList(
            "..", ".", "", "../../etc", "/etc", "a/b", "vol/../../x", "a\0b", "x".repeat(300), "vol-..-x",
            ".hidden", "-rf", "a b", "a\nb", "~root", "vol-\u00e9", null);

    private static StorageEngine open(String engine, TestPool test) {
        return engine.equals("image") ? test.imageEngine(4.0) : test.dirEngine();
    }

    private static AccessType access(String engine) {
        return engine.equals("image") ? AccessType.BLOCK : AccessType.mount("");
    }

    /** Every engine call that takes an id, with the hostile id in each id position. */
    private static List<Consumer<String>> calls(StorageEngine e, TestPool test, String goodVolume, String goodSnapshot, AccessType access) {
        Path staging = test.node.resolve("staging/x");
        Path target = test.node.resolve("target/x");
        PublishOptions publish = new PublishOptions(false, false, List.of(), OptionalInt.empty());
        return List.of(
                id -> e.createVolume(id, MIB, access, Label.NONE),
                id -> e.deleteVolume(id),
                id -> e.expandVolume(id, 2 * MIB),
                id -> e.createSnapshot(id, goodVolume, Label.NONE),
                id -> e.createSnapshot(goodSnapshot + "x", id, Label.NONE),
                id -> e.createGroupSnapshot(single(id, goodVolume), Label.NONE, null),
                id -> e.createGroupSnapshot(single(goodSnapshot + "y", id), Label.NONE, null),
                id -> e.deleteSnapshot(id),
                id -> e.restoreSnapshot(id, goodSnapshot, 0, access, Label.NONE),
                id -> e.restoreSnapshot(goodVolume + "r", id, 0, access, Label.NONE),
                id -> e.cloneVolume(id, goodVolume, 0, access, Label.NONE),
                id -> e.cloneVolume(goodVolume + "c", id, 0, access, Label.NONE),
                id -> e.modifyVolume(id, Map.of()),
                id -> e.volumeCondition(id),
                id -> e.artifact(Artifact.Kind.VOLUME, id),
                id -> e.artifact(Artifact.Kind.SNAPSHOT, id),
                id -> node(e).stage(id, staging, new StageOptions.Mount("ext4", List.of(), 0)),
                id -> node(e).unstage(id, staging),
                id -> node(e).publish(id, staging, target, publish),
                id -> node(e).unpublish(id, target),
                id -> node(e).stats(id, test.node),
                id -> node(e).nodeExpand(id, test.node));
    }

    /** Mounts under the test's directories, or of a loop device backed by a file in the pool. */
    private static List<String> mountsNear(TestPool test) {
        java.nio.file.Path root = test.pool.dataDir();
        return MountTable.read().mounts().stream()
                .filter(m -> m.mountPoint().startsWith(root) || m.mountPoint().startsWith(test.node)
                        || m.source().startsWith(root.toString()))
                .map(m -> m.mountPoint() + " " + m.source())
                .sorted().toList();
    }

    @ParameterizedTest(name = "{0} engine")
    @ValueSource(strings = {"image", "dir"})
    void hostileIdsAreRefusedBeforeTheyBecomePaths(String engineName) throws Exception {
        try (TestPool test = TestPool.create("xfs", 512 * MIB); StorageEngine engine = open(engineName, test)) {
            String goodVolume = volumeId();
            String goodSnapshot = snapshotId();
            engine.createVolume(goodVolume, MIB, access(engineName), Label.NONE);
            engine.createSnapshot(goodSnapshot, goodVolume, Label.NONE);
            List<String> poolBefore = tree(test.pool.dataDir());
            // Only mounts this test could cause: other processes on the machine may mount meanwhile.
            List<String> mountsBefore = mountsNear(test);

            List<Consumer<String>> calls = calls(engine, test, goodVolume, goodSnapshot, access(engineName));
            for (String hostile : HOSTILE) {
                for (int i = 0; i < calls.size(); i++) {
                    Consumer<String> call = calls.get(i);
                    StorageException e = assertThrows(StorageException.class, () -> call.accept(hostile),
                            "call #" + i + " with " + printable(hostile));
                    assertEquals(Status.Code.INVALID_ARGUMENT, StorageStatus.code(e.reason()), "call #" + i + " with " + printable(hostile) + ": " + e.getMessage());
                }
            }
            assertEquals(poolBefore, tree(test.pool.dataDir()), "nothing created or deleted");
            assertEquals(mountsBefore, mountsNear(test), "nothing mounted");
            assertEquals(List.of(), test.leftovers());
        }
    }

    @ParameterizedTest(name = "{0} engine")
    @ValueSource(strings = {"image", "dir"})
    void symlinksPlantedInThePoolAreNeverFollowed(String engineName) throws Exception {
        try (TestPool test = TestPool.create("xfs", 512 * MIB); StorageEngine engine = open(engineName, test)) {
            boolean image = engineName.equals("image");
            String suffix = image ? ".img" : ".dir";
            Path outside = Files.createDirectories(test.node.resolve("outside"));
            Path victim = image ? outside.resolve("victim.img") : Files.createDirectories(outside.resolve("victim"));
            if (image) Pattern.write(victim, 0, 99, (int) MIB);
            else Pattern.write(victim.resolve("precious"), 0, 99, 4096);
            List<String> outsideBefore = tree(outside);

            String vol = volumeId();
            String snap = snapshotId();
            Files.createSymbolicLink(test.pool.path().resolve("volumes/" + vol + suffix), victim);
            Files.createSymbolicLink(test.pool.path().resolve("snapshots/" + snap + suffix), victim);
            Path staging = test.node.resolve("staging/x");
            Path target = test.node.resolve("target/x");
            AccessType access = access(engineName);

            List<Runnable> refused = new ArrayList<>(List.of(
                    () -> engine.artifact(Artifact.Kind.VOLUME, vol),
                    () -> engine.createVolume(vol, MIB, access, Label.NONE),
                    () -> engine.deleteVolume(vol),
                    () -> engine.expandVolume(vol, 64 * MIB),
                    () -> engine.createSnapshot(snapshotId(), vol, Label.NONE),
                    () -> engine.cloneVolume(volumeId(), vol, 0, access, Label.NONE),
                    () -> engine.restoreSnapshot(volumeId(), snap, 0, access, Label.NONE),
                    () -> engine.deleteSnapshot(snap),
                    () -> engine.modifyVolume(vol, Map.of()),
                    () -> node(engine).stage(vol, staging, image ? new StageOptions.Block(0) : new StageOptions.Mount("", List.of(), 0)),
                    () -> node(engine).publish(vol, staging, target, new PublishOptions(!image ? false : true, false, List.of(), OptionalInt.empty()))));
            for (int i = 0; i < refused.size(); i++) {
                Runnable call = refused.get(i);
                StorageException e = assertThrows(StorageException.class, call::run, "call #" + i);
                assertEquals(Status.Code.FAILED_PRECONDITION, StorageStatus.code(e.reason()), "call #" + i + ": " + e.getMessage());
            }
            assertEquals(outsideBefore, tree(outside), "the victim is untouched");
            if (image) {
                Pattern.assertHolds(victim, 0, 99, (int) MIB);
                assertEquals(List.of(), LoopDevice.findByBackingFile(victim), "never attached");
            } else {
                Pattern.assertHolds(victim.resolve("precious"), 0, 99, 4096);
            }
            assertTrue(Files.isSymbolicLink(test.pool.path().resolve("volumes/" + vol + suffix)));

            // a symlinked sidecar: the rename replaces the link, never writes through it
            String other = volumeId();
            Path sidecar = test.pool.path().resolve("volumes/" + other + ".meta");
            Path victimMeta = Files.writeString(outside.resolve("victim.meta"), "precious");
            Files.createSymbolicLink(sidecar, victimMeta);
            engine.createVolume(other, MIB, access, Label.NONE);
            assertEquals("precious", Files.readString(victimMeta));
            assertTrue(!Files.isSymbolicLink(sidecar) && Files.readString(sidecar).contains(other));

            // the whole volumes directory swapped for a symlink to the outside
            Path volumes = test.pool.path().resolve("volumes");
            Files.move(volumes, test.pool.path().resolve("volumes.moved"));
            Files.createSymbolicLink(volumes, outside);
            List<String> outsideNow = tree(outside);
            StorageException e = assertThrows(StorageException.class, () -> engine.createVolume(volumeId(), MIB, access, Label.NONE));
            assertEquals(Status.Code.FAILED_PRECONDITION, StorageStatus.code(e.reason()), e.getMessage());
            assertEquals(Status.Code.FAILED_PRECONDITION,
                    StorageStatus.code(assertThrows(StorageException.class, () -> engine.deleteVolume(other)).reason()));
            assertEquals(outsideNow, tree(outside));
            assertEquals(List.of(), test.leftovers());
            assertTrue(MountTable.read().under(test.node).isEmpty());
        }
    }

    private static List<String> tree(Path root) throws Exception {
        try (var walk = Files.walk(root)) {
            List<String> entries = new ArrayList<>();
            for (Path p : walk.sorted().toList()) {
                entries.add(root.relativize(p) + (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) ? " " + Files.size(p) : ""));
            }
            return entries;
        }
    }

    /** Map.of refuses null; the engine must refuse it itself. */
    private static Map<String, String> single(String key, String value) {
        Map<String, String> map = new java.util.HashMap<>();
        map.put(key, value);
        return map;
    }

    private static String printable(String s) {
        return s == null ? "null" : "\"" + (s.length() > 20 ? s.substring(0, 20) + "..." : s).replace("\0", "\\0").replace("\n", "\\n") + "\"";
    }
}
