package io.csi4j.testkit.suite;

import io.csi4j.testkit.AccessType;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.SplittableRandom;

/**
 * Data the suite writes into a published volume and expects back from snapshots and clones: a file
 * in the mounted directory, or the first bytes of the block device published at target_path.
 * Written with plain Java file IO and forced to stable storage before any snapshot is cut.
 */
public final class VolumeData {
    public static final String FILE_NAME = "csi4j-sanity.bin";
    public static final int SIZE = 64 * 1024;

    private VolumeData() {}

    /** A pattern no two seeds share, so a restore of the wrong snapshot cannot pass. */
    public static byte[] pattern(long seed) {
        byte[] data = new byte[SIZE];
        new SplittableRandom(seed).nextBytes(data);
        return data;
    }

    public static void write(Path target, AccessType access, byte[] data) throws IOException {
        Path file = access == AccessType.MOUNT ? target.resolve(FILE_NAME) : target;
        var options = access == AccessType.MOUNT
                ? new StandardOpenOption[] {StandardOpenOption.WRITE, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING}
                : new StandardOpenOption[] {StandardOpenOption.WRITE};
        try (FileChannel channel = FileChannel.open(file, options)) {
            ByteBuffer buffer = ByteBuffer.wrap(data);
            long position = 0;
            while (buffer.hasRemaining()) position += channel.write(buffer, position);
            channel.force(true);
        }
    }

    public static byte[] read(Path target, AccessType access) throws IOException {
        Path file = access == AccessType.MOUNT ? target.resolve(FILE_NAME) : target;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer buffer = ByteBuffer.allocate(SIZE);
            long position = 0;
            while (buffer.hasRemaining()) {
                int n = channel.read(buffer, position);
                if (n < 0) break;
                position += n;
            }
            return Arrays.copyOf(buffer.array(), buffer.position());
        }
    }

    /** Reads the volume back and names the first difference, or returns null when it holds exactly {@code expected}. */
    public static String difference(Path target, AccessType access, byte[] expected) {
        byte[] actual;
        try {
            actual = read(target, access);
        } catch (IOException e) {
            return "cannot read " + (access == AccessType.MOUNT ? target.resolve(FILE_NAME) : target) + ": " + e;
        }
        if (actual.length < expected.length) return "only " + actual.length + " of " + expected.length + " bytes";
        int at = Arrays.mismatch(actual, 0, expected.length, expected, 0, expected.length);
        if (at < 0) return null;
        return "bytes differ at offset " + at + " (got " + HexFormat.of().formatHex(actual, at, Math.min(at + 8, actual.length))
                + ", expected " + HexFormat.of().formatHex(expected, at, Math.min(at + 8, expected.length)) + ")";
    }
}
