package io.csi4j.driver.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountFlag;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.Mounts;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import io.csi4j.driver.engine.image.ImageEngine;

/** The pool: a plain directory, or (--pool-size) an XFS image the plugin mounts, adopts and re-attaches. */
@ExtendWith(LeakCheck.class)
class PoolTest {
    private static final long MIB = 1 << 20;
    private Path dataDir;

    @BeforeEach
    void dataDir() throws IOException {
        ScratchFilesystem.require("xfs");
        // on the root filesystem, like a fresh machine's /var/lib: ext4 here, no reflink
        dataDir = LeakCheck.watch(Files.createTempDirectory("csi4j-engine-pool-"));
    }

    @AfterEach
    void cleanUp() throws IOException {
        if (dataDir == null) return;
        LeakCheck.release(Set.of(dataDir));
        try (Stream<Path> paths = Files.walk(dataDir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }

    private List<MountInfo> mountsAtPool() {
        Path pool = dataDir.resolve("pool");
        return MountTable.read().mounts().stream().filter(m -> m.mountPoint().equals(pool)).toList();
    }

    @Test
    void poolSizeCreatesAnXfsPoolThatIsAdoptedAndReattachedAfterAReboot() throws Exception {
        Pool created = Pool.open(new DataDir(dataDir), OptionalLong.of(512 * MIB));
        Path image = dataDir.resolve("pool.img");
        assertEquals(image, created.image().orElseThrow());
        assertEquals("xfs", created.filesystem());
        assertTrue(created.reflink(), "XFS with reflink=1");
        assertTrue(created.describe().contains("created and mounted"), created.describe());
        MountInfo mount = MountTable.read().at(dataDir.resolve("pool")).orElseThrow();
        assertEquals("xfs", mount.fsType());
        assertTrue(Binds.isLoopOf(mount, image), mount.source());
        assertTrue(mount.mountOptions().containsAll(List.of("nodev", "nosuid")), mount.mountOptions().toString());
        assertEquals(512 * MIB, Files.size(image));
        assertTrue(io.csi4j.driver.os.Fallocate.allocatedBytes(image) < 128 * MIB, "sparse");
        Files.writeString(created.path().resolve("kept"), "across a reboot");

        Pool adopted = Pool.open(new DataDir(dataDir), OptionalLong.of(512 * MIB)); // a plugin restart
        assertTrue(adopted.describe().contains("adopted"), adopted.describe());
        assertEquals(1, mountsAtPool().size(), "adopted, not mounted twice");
        assertEquals(1, LoopDevice.findByBackingFile(image).size());

        adopted.release(); // the machine reboots: no mount, no loop device
        assertEquals(List.of(), mountsAtPool());
        assertEquals(List.of(), LoopDevice.findByBackingFile(image));
        assertFalse(Files.exists(dataDir.resolve("pool/kept")));

        Pool reattached = Pool.open(new DataDir(dataDir), OptionalLong.of(512 * MIB));
        assertTrue(reattached.describe().contains("attached and mounted"), reattached.describe());
        assertEquals("across a reboot", Files.readString(reattached.path().resolve("kept")));
        assertTrue(LoopDevice.findByBackingFile(image).getFirst().autoclear(), "unmounting the pool frees its device");

        long before = FsStats.of(reattached.path()).totalBytes();
        Pool grown = Pool.open(new DataDir(dataDir), OptionalLong.of(768 * MIB));
        long after = FsStats.of(grown.path()).totalBytes();
        assertTrue(after - before > 200 * MIB, "grew online from " + before + " to " + after);
        assertEquals(1, mountsAtPool().size());
        grown.release();
        assertEquals(List.of(), LoopDevice.findByBackingFile(image));
    }

    @Test
    void aPlainDirectoryPoolOnExt4SaysItHasNoReflink() {
        Pool pool = Pool.open(new DataDir(dataDir), OptionalLong.empty());
        assertEquals(dataDir.resolve("pool"), pool.path());
        assertTrue(pool.image().isEmpty());
        if (!FsStats.of(dataDir).type().equals("ext4")) return; // the message is what matters on ext4 roots
        assertFalse(pool.reflink());
        String notice = ImageEngine.open(pool, ImageEngine.Options.defaults()).notices().getFirst();
        assertTrue(notice.contains("no reflink") && notice.contains("--pool-size"), notice);
        assertEquals(List.of(), mountsAtPool());
    }

    @Test
    void refusesToHideContentOrSomeoneElsesMount() throws Exception {
        Files.createDirectories(dataDir.resolve("pool"));
        Files.writeString(dataDir.resolve("pool/volume-of-a-plain-pool"), "x");
        IllegalStateException notEmpty = assertThrows(IllegalStateException.class,
                () -> Pool.open(new DataDir(dataDir), OptionalLong.of(512 * MIB)));
        assertTrue(notEmpty.getMessage().contains("not empty"), notEmpty.getMessage());
        assertEquals(List.of(), mountsAtPool());
        assertEquals(List.of(), LoopDevice.findByBackingFile(dataDir.resolve("pool.img")));

        Files.delete(dataDir.resolve("pool/volume-of-a-plain-pool"));
        Mounts.mount("tmpfs", dataDir.resolve("pool"), "tmpfs", Set.of(MountFlag.NODEV), "size=1m");
        try {
            IllegalStateException foreign = assertThrows(IllegalStateException.class,
                    () -> Pool.open(new DataDir(dataDir), OptionalLong.of(512 * MIB)));
            assertTrue(foreign.getMessage().contains("tmpfs"), foreign.getMessage());
        } finally {
            Mounts.unmount(dataDir.resolve("pool"));
        }
    }
}
