package io.csi4j.driver.engine.image;

import io.csi4j.driver.os.Durable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserDefinedFileAttributeView;

/**
 * A durable mark on a blank volume's image (the extended attribute {@code user.csi4j.formatting}) that says "mkfs
 * ran here and had not finished". A power cut or crash in mkfs leaves a half-made filesystem: an XFS whose primary
 * superblock still has its mkfs-in-progress bit (the kernel refuses it, EUCLEAN), or for ext4 and btrfs blocks
 * without a superblock, which the stage must refuse as "data without a filesystem". Only the mark tells such an
 * image from one holding data: with it, the retried stage formats again, which loses nothing, since the volume was
 * blank when the mark was set and nothing but mkfs wrote it since. Where the pool's filesystem has no user extended
 * attributes the mark is skipped (and a cut in mkfs needs a hand: the stage then says what it found).
 */
final class FormatIntent {
    private static final String NAME = "csi4j.formatting";

    private FormatIntent() {}

    /** Marks the image and makes the mark durable, before mkfs writes its first block. */
    static void begin(Path image) {
        UserDefinedFileAttributeView view = view(image);
        if (view == null) return;
        try {
            view.write(NAME, ByteBuffer.wrap("mkfs".getBytes(StandardCharsets.US_ASCII)));
        } catch (IOException e) {
            throw new UncheckedIOException("marking " + image + " as being formatted", e);
        }
        Durable.fsync(image);
    }

    /** Whether a format of this image began and never ended (a crash or power cut cut it short). */
    static boolean pending(Path image) {
        UserDefinedFileAttributeView view = view(image);
        if (view == null) return false;
        try {
            return view.list().contains(NAME);
        } catch (IOException e) {
            throw new UncheckedIOException("reading the extended attributes of " + image, e);
        }
    }

    /** Removes the mark; the caller fsyncs the image before it answers (after mkfs's writes were made durable). */
    static void end(Path image) {
        UserDefinedFileAttributeView view = view(image);
        if (view == null) return;
        try {
            view.delete(NAME);
        } catch (IOException e) {
            throw new UncheckedIOException("unmarking " + image + " as being formatted", e);
        }
    }

    /**
     * Drops a pending mark, durably, before anything but mkfs may write the image (a stage as a raw block device):
     * from then on what is there may be someone's data, and a later mount stage must meet it, never format it.
     */
    static void abandon(Path image) {
        if (!pending(image)) return;
        end(image);
        Durable.fsync(image);
    }

    private static UserDefinedFileAttributeView view(Path image) {
        try {
            if (!Files.getFileStore(image).supportsFileAttributeView(UserDefinedFileAttributeView.class)) return null;
        } catch (IOException e) {
            throw new UncheckedIOException("the filesystem of " + image, e);
        }
        return Files.getFileAttributeView(image, UserDefinedFileAttributeView.class);
    }
}
