package io.csi4j.driver.engine.image;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.DataPath;
import io.csi4j.driver.engine.NodeStorage;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.engine.PublishOptions;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.Mounts;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The engine tests' node: an xfs pool on a 512 MiB scratch filesystem, its image engine, node side and data mover, and
 * a directory for staging paths and targets, both watched by {@link LeakCheck} (the test class extends with it). Root
 * and xfs required ({@link ScratchFilesystem#require}). Closing it thaws what a test left frozen, unmounts what is left
 * under the node directory (deepest first), closes the engine, then removes the node directory and the scratch
 * filesystem.
 */
final class XfsEngineFixture implements AutoCloseable {
    static final long MIB = 1 << 20;

    final ScratchFilesystem scratch;
    final Path nodeDir;
    final Pool pool;
    final ImageEngine engine;
    final NodeStorage node;
    final DataMover mover;

    /** {@code name} names the node directory ({@code csi4j-<name>-*} in java.io.tmpdir). */
    XfsEngineFixture(String name) throws Exception {
        ScratchFilesystem.require("xfs");
        scratch = ScratchFilesystem.create("xfs", 512 * MIB);
        LeakCheck.watch(scratch.dir());
        nodeDir = LeakCheck.watch(Files.createTempDirectory("csi4j-" + name + "-"));
        pool = Pool.open(new DataDir(scratch.mountPoint().resolve("data")), OptionalLong.empty());
        engine = ImageEngine.open(pool, new ImageEngine.Options(1.0, DataPath.CONFIGURED.volumeDirectIo()));
        node = engine.capability(NodeStorage.class).orElseThrow();
        mover = engine.capability(DataMover.class).orElseThrow();
    }

    Path staging(String vol) {
        return nodeDir.resolve("staging").resolve(vol);
    }

    Path target(String vol) {
        return nodeDir.resolve("pods").resolve(vol).resolve("mount");
    }

    /** The volume's image file in the pool. */
    Path image(String vol) {
        return pool.path().resolve("volumes/" + vol + ".img");
    }

    /** A new ext4 volume of {@code bytes}, not staged. */
    String newVolume(long bytes) throws Exception {
        String vol = ObjectId.generate(ObjectId.Kind.VOLUME, "node-1").toString();
        engine.createVolume(vol, bytes, AccessType.mount("ext4"), Label.NONE);
        return vol;
    }

    void stage(String vol) throws Exception {
        node.stage(vol, staging(vol), new StageOptions.Mount("ext4", List.of(), 0));
    }

    /** A new 32 MiB ext4 volume, staged and published, whose file {@code kept} holds {@code text}. */
    String stagedAndPublished(String text) throws Exception {
        String vol = newVolume(32 * MIB);
        stage(vol);
        node.publish(vol, staging(vol), target(vol), new PublishOptions(false, false, List.of(), OptionalInt.empty()));
        Files.writeString(target(vol).resolve("kept"), text);
        return vol;
    }

    @Override
    public void close() throws Exception {
        try {
            engine.freezer().thawLeftFrozen();      // a freeze left behind would stay in the kernel past the unmount
            for (Path p : MountTable.read().under(nodeDir).stream().map(m -> m.mountPoint()).sorted(Comparator.reverseOrder()).toList()) {
                Mounts.unmount(p);
            }
            engine.close();
        } finally {
            LeakCheck.release(Set.of(nodeDir, scratch.mountPoint()));
            if (MountTable.read().under(nodeDir).isEmpty()) {
                try (var paths = Files.walk(nodeDir)) {
                    for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
                }
            }
            scratch.close();
        }
    }
}
