package io.csi4j.driver.engine;

import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.stream.Stream;
import io.csi4j.driver.engine.image.ImageEngine;

/**
 * A pool on a real scratch filesystem (ext4, xfs or btrfs) plus a "node" directory for staging and
 * target paths. {@link #leftovers()} lists what the engine left in the kernel; {@link #close()}
 * removes everything, whatever state a failed test left.
 */
final class TestPool implements AutoCloseable {
    final ScratchFilesystem scratch;
    final Pool pool;
    final Path node;

    private TestPool(ScratchFilesystem scratch, Path node) {
        this.scratch = scratch;
        this.node = node;
        this.pool = Pool.open(new DataDir(scratch.mountPoint().resolve("data")), OptionalLong.empty());
    }

    static TestPool create(String fsType, long sizeBytes) {
        return create(fsType, sizeBytes, List.of(), null);
    }

    /** With mkfs options and mount data: e.g. XFS mounted {@code prjquota} for enforced directory capacity. */
    static TestPool create(String fsType, long sizeBytes, List<String> mkfsOptions, String mountData) {
        ScratchFilesystem.require(fsType);
        ScratchFilesystem scratch = ScratchFilesystem.create(fsType, sizeBytes, mkfsOptions, mountData);
        LeakCheck.watch(scratch.dir());
        try {
            // world-traversable, like kubelet's directories, so tests can act as a non-root pod user
            Path node = LeakCheck.watch(Files.createTempDirectory("csi4j-engine-node-",
                    java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                            java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"))));
            return new TestPool(scratch, node);
        } catch (IOException | RuntimeException e) {
            scratch.close();
            throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
        }
    }

    ImageEngine imageEngine(double overcommit) {
        return ImageEngine.open(pool, new ImageEngine.Options(overcommit, DataPath.CONFIGURED.volumeDirectIo()));
    }

    /** The node side of a real engine (every real engine offers it). */
    static NodeStorage node(PoolStorage engine) {
        return engine.capability(NodeStorage.class).orElseThrow();
    }

    DirEngine dirEngine() {
        return DirEngine.open(pool);
    }

    Path staging(String volumeId) {
        return node.resolve("staging").resolve(volumeId);
    }

    Path target(String volumeId) {
        return node.resolve("pods").resolve(volumeId).resolve("mount");
    }

    /** Mounts under the node directory and loop devices backed by pool files: what a finished test must not leave. */
    List<String> leftovers() {
        List<String> left = new ArrayList<>();
        for (MountInfo m : MountTable.read().under(node)) left.add("mount " + m.mountPoint());
        for (LoopDevice d : LoopDevice.list()) {
            if (d.backingFile().startsWith(scratch.mountPoint())) left.add("loop " + d.node() + " -> " + d.backingFile());
        }
        return left;
    }

    @Override
    public void close() {
        try {
            LeakCheck.release(Set.of(node, scratch.mountPoint()));
            deleteTree(node);
        } finally {
            scratch.close();
        }
    }

    private static void deleteTree(Path root) {
        if (!Files.exists(root)) return;
        if (!MountTable.read().under(root).isEmpty()) throw new IllegalStateException(root + " still has mounts");
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
