package io.csi4j.cli.reliability;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;

/**
 * Catches a plugin's mkfs.xfs half-way: stopped (SIGSTOP) once the image's primary superblock is on the disk with
 * its mkfs-in-progress bit (sb_inprogress, byte 126) still set, the state a power cut in mkfs leaves. The image is
 * read with O_DIRECT, as the loop device writes it, so no stale page of the test's own reads is seen.
 */
final class MkfsStop {
    private static final int IN_PROGRESS = 126;

    private MkfsStop() {}

    /** True when mkfs.xfs is stopped with the superblock in progress; false when it finished first (or never ran). */
    static boolean midway(long pluginPid, Path image, Thread stage) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        boolean seen = false;
        while (System.nanoTime() < deadline) {
            Optional<ProcessHandle> mkfs = ProcessHandle.of(pluginPid).orElseThrow().descendants()
                    .filter(p -> p.info().command().orElse("").endsWith("mkfs.xfs")).findFirst();
            if (mkfs.isEmpty()) {
                if (seen || !stage.isAlive()) return false;   // it ran and finished between two looks
                Thread.sleep(1);
                continue;
            }
            seen = true;
            if (!inProgress(image)) {
                Thread.sleep(1);
                continue;
            }
            try {
                PowerCut.run("kill", "-STOP", Long.toString(mkfs.get().pid()));
            } catch (IOException finished) {
                return false;   // it exited between the look and the signal
            }
            if (mkfs.get().isAlive() && inProgress(image)) return true;
            PowerCut.run("kill", "-CONT", Long.toString(mkfs.get().pid()));
            return false;
        }
        throw new IllegalStateException("no mkfs.xfs under the plugin within 30 s");
    }

    /** The image starts with an XFS superblock whose mkfs-in-progress bit is set. */
    static boolean inProgress(Path image) throws IOException {
        ByteBuffer block = ByteBuffer.allocateDirect(2 * 4096).alignedSlice(4096).limit(4096);
        try (FileChannel file = FileChannel.open(image, StandardOpenOption.READ, ExtendedOpenOption.DIRECT)) {
            file.read(block, 0);
        }
        return block.get(0) == 'X' && block.get(1) == 'F' && block.get(2) == 'S' && block.get(3) == 'B' && block.get(IN_PROGRESS) != 0;
    }
}
