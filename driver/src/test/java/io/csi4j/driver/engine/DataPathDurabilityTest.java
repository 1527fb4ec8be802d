package io.csi4j.driver.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.nio.file.ExtendedOpenOption;
import io.csi4j.driver.engine.Artifact.Label;
import io.csi4j.driver.engine.image.ImageEngine;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Data is acknowledged only once it is on the pool's disk, with direct IO on both loop devices: a volume's
 * filesystem on loop device 2, over its image on the pool's XFS, on loop device 1, over {@code pool.img} on an
 * ext4 that is itself a scratch loop device 0 — the "disk". The disk is read raw with O_DIRECT, which no page
 * cache above it answers and which flushes nobody's dirty pages (an O_DIRECT read or a FICLONE of the image
 * file would write the file's dirty pages back first, and so could not tell a lost flush from a kept one).
 */
@ExtendWith(LeakCheck.class)
class DataPathDurabilityTest {
    private static final long MIB = 1 << 20;
    private static final int BLOCK = 4096;
    private static final int BLOCKS = 16;
    private static final int SECTOR = 512;

    @Test
    void anFsyncInsideAVolumeIsOnTheDiskBeneathBothLoops() throws Exception {
        ScratchFilesystem.require("ext4");
        ScratchFilesystem.require("xfs");
        try (ScratchFilesystem disk = ScratchFilesystem.create("ext4", 1024 * MIB)) {
            LeakCheck.watch(disk.dir());
            Path node = LeakCheck.watch(Files.createTempDirectory("csi4j-durability-node-"));
            Pool pool = Pool.open(new DataDir(disk.mountPoint().resolve("data")), OptionalLong.of(600 * MIB));
            try (ImageEngine engine = ImageEngine.open(pool, new ImageEngine.Options(1.0, true))) {
                String volume = ImageEngineLifecycleTest.volumeId();
                Path staging = node.resolve("staging");
                engine.createVolume(volume, 128 * MIB, AccessType.mount("ext4"), Label.NONE);
                TestPool.node(engine).stage(volume, staging, new StageOptions.Mount("ext4", List.of(), 0));
                try {
                    Path image = pool.path().resolve("volumes").resolve(volume + ".img");
                    assertTrue(Files.isRegularFile(image), image.toString());
                    LoopDevice volumeLoop = LoopDevice.findByBackingFile(image).getFirst();
                    LoopDevice poolLoop = LoopDevice.findByBackingFile(pool.image().orElseThrow()).getFirst();
                    assertTrue(volumeLoop.directIo(), "the volume's loop device does direct IO");
                    assertEquals(DataPath.CONFIGURED.poolDirectIo(), poolLoop.directIo(), "the pool's loop device");

                    // the check can fail: data written but not synced is not on the disk yet (tried up to three
                    // times: a machine-wide sync(1) by someone else may flush it meanwhile)
                    boolean missingBeforeSync = false;
                    for (int attempt = 0; attempt < 3 && !missingBeforeSync; attempt++) {
                        List<byte[]> unsynced = randomBlocks(attempt);
                        Path file = staging.resolve("unsynced-" + attempt);
                        try (FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                            for (byte[] b : unsynced) out.write(ByteBuffer.wrap(b));
                            missingBeforeSync = found(disk.device().node(), unsynced) < BLOCKS;
                            out.force(true);
                        }
                    }
                    assertTrue(missingBeforeSync, "unsynced writes were on the disk at once in three tries: the check cannot fail");

                    List<byte[]> synced = randomBlocks(99);
                    try (FileChannel out = FileChannel.open(staging.resolve("synced"), StandardOpenOption.CREATE_NEW,
                            StandardOpenOption.WRITE)) {
                        for (byte[] b : synced) out.write(ByteBuffer.wrap(b));
                        out.force(true);
                        // read while the file is still open: nothing (close, unmount, detach) flushes for us
                        assertEquals(BLOCKS, found(disk.device().node(), synced), "every fsynced block is on the disk");
                    }
                } finally {
                    TestPool.node(engine).unstage(volume, staging);
                    engine.deleteVolume(volume);
                }
            } finally {
                pool.release();
                LeakCheck.release(Set.of(node, disk.mountPoint()));
                Files.deleteIfExists(node.resolve("staging"));
                Files.deleteIfExists(node);
            }
        }
    }

    private static List<byte[]> randomBlocks(long seed) {
        Random random = new Random(System.nanoTime() ^ seed);
        List<byte[]> blocks = new ArrayList<>();
        for (int i = 0; i < BLOCKS; i++) {
            byte[] b = new byte[BLOCK];
            random.nextBytes(b);
            blocks.add(b);
        }
        return blocks;
    }

    /**
     * How many of the blocks the device holds, read with O_DIRECT. Compared by 512-byte sector: a small ext4
     * has 1 KiB blocks, so a 4 KiB write may land in pieces anywhere sector-aligned. A block counts when all
     * its sectors are there.
     */
    private static int found(Path device, List<byte[]> blocks) throws IOException {
        Map<Long, byte[]> byPrefix = new HashMap<>();
        for (byte[] b : blocks) {
            for (int s = 0; s < BLOCK; s += SECTOR) byPrefix.put(ByteBuffer.wrap(b, s, SECTOR).getLong(), Arrays.copyOfRange(b, s, s + SECTOR));
        }
        Set<Long> seen = new HashSet<>();
        ByteBuffer buffer = ByteBuffer.allocateDirect((int) MIB + BLOCK).alignedSlice(BLOCK);
        byte[] candidate = new byte[SECTOR];
        try (FileChannel in = FileChannel.open(device, StandardOpenOption.READ, ExtendedOpenOption.DIRECT)) {
            for (long at = 0; ; at += MIB) {
                buffer.clear().limit((int) MIB);
                int read = in.read(buffer, at);
                if (read <= 0) break;
                for (int off = 0; off + SECTOR <= read; off += SECTOR) {
                    byte[] match = byPrefix.get(buffer.getLong(off));
                    if (match == null) continue;
                    buffer.get(off, candidate);
                    if (Arrays.equals(candidate, match)) seen.add(buffer.getLong(off));
                }
            }
        }
        int complete = 0;
        for (byte[] b : blocks) {
            boolean all = true;
            for (int s = 0; s < BLOCK; s += SECTOR) all &= seen.contains(ByteBuffer.wrap(b, s, SECTOR).getLong());
            if (all) complete++;
        }
        return complete;
    }
}
