package io.csi4j.driver.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Optional;
import java.util.Random;

/**
 * Deterministic pseudo-random bytes at a few fixed offsets of a volume (its image file, its block
 * device or a file in its filesystem): written once under a seed, compared byte for byte later. The
 * offsets lie in the first 16 MiB, the smallest volume the crash and socket tests make.
 */
public final class ContentPattern {
    public static final long[] OFFSETS = {0, (5L << 20) + 4093, (15L << 20) + 12345};
    public static final int LENGTH = 8192;
    public static final long MIN_SIZE = 16L << 20;

    private ContentPattern() {}

    public static byte[] bytes(long seed, int offsetIndex) {
        byte[] data = new byte[LENGTH];
        new Random(seed * 31 + offsetIndex).nextBytes(data);
        return data;
    }

    /** Writes the pattern at every offset and forces it to the device before returning. */
    public static void write(Path path, long seed) {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.WRITE)) {
            for (int i = 0; i < OFFSETS.length; i++) {
                ByteBuffer buffer = ByteBuffer.wrap(bytes(seed, i));
                while (buffer.hasRemaining()) ch.write(buffer, OFFSETS[i] + buffer.position());
            }
            ch.force(true);
        } catch (IOException e) {
            throw new UncheckedIOException("writing the pattern into " + path, e);
        }
    }

    /** Empty if {@code path} holds the pattern of {@code seed}, else what differs. */
    public static Optional<String> mismatch(Path path, long seed) {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            for (int i = 0; i < OFFSETS.length; i++) {
                ByteBuffer buffer = ByteBuffer.allocate(LENGTH);
                while (buffer.hasRemaining() && ch.read(buffer, OFFSETS[i] + buffer.position()) >= 0) {
                    // keep reading until full or end of file
                }
                if (!Arrays.equals(bytes(seed, i), buffer.array())) {
                    return Optional.of(path + " @" + OFFSETS[i] + " does not hold the pattern of seed " + seed);
                }
            }
            return Optional.empty();
        } catch (IOException e) {
            return Optional.of("cannot read " + path + ": " + e);
        }
    }
}
