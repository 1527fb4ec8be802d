package io.csi4j.driver.engine.image;

import io.csi4j.driver.os.FileMarks;
import java.nio.file.Path;

/**
 * A durable mark on a blank volume's image (the extended attribute {@code user.csi4j.formatting}) that says "mkfs
 * ran here and had not finished". A power cut or crash in mkfs leaves a half-made filesystem: an XFS whose primary
 * superblock still has its mkfs-in-progress bit (the kernel refuses it, EUCLEAN), or for ext4 and btrfs blocks
 * without a superblock, which the stage must refuse as "data without a filesystem". Only the mark tells such an
 * image from one holding data: with it, the retried stage formats again, which loses nothing, since the volume was
 * blank when the mark was set and nothing but mkfs wrote it since. Where the pool's filesystem has no user extended
 * attributes the mark is skipped ({@link FileMarks#trySet}), and a cut in mkfs needs a hand: the stage then says
 * what it found.
 */
final class FormatIntent {
    private static final String MARK = "user.csi4j.formatting";

    private FormatIntent() {}

    /** Marks the image and makes the mark durable, before mkfs writes its first block. */
    static void begin(Path image) {
        FileMarks.trySet(image, MARK);
    }

    /** Whether a format of this image began and never ended (a crash or power cut cut it short). */
    static boolean pending(Path image) {
        return FileMarks.has(image, MARK);
    }

    /** Removes the mark durably; mkfs's writes were made durable before (the caller's fsync of the image). */
    static void end(Path image) {
        FileMarks.clear(image, MARK);
    }

    /**
     * Drops a pending mark, durably, before anything but mkfs may write the image (a stage as a raw block device):
     * from then on what is there may be someone's data, and a later mount stage must meet it, never format it.
     */
    static void abandon(Path image) {
        FileMarks.clear(image, MARK);
    }
}
