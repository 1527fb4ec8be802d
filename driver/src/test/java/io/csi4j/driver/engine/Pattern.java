package io.csi4j.driver.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;

/** Deterministic pseudo-random bytes: written once, compared byte for byte after a snapshot round trip. */
final class Pattern {
    private Pattern() {}

    static byte[] bytes(long seed, int length) {
        byte[] data = new byte[length];
        new Random(seed).nextBytes(data);
        return data;
    }

    /** Writes the pattern at {@code offset} of a file or device and forces it to the device. */
    static void write(Path path, long offset, long seed, int length) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            ByteBuffer buffer = ByteBuffer.wrap(bytes(seed, length));
            while (buffer.hasRemaining()) ch.write(buffer, offset + buffer.position());
            ch.force(true);
        }
    }

    static byte[] read(Path path, long offset, int length) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            ByteBuffer buffer = ByteBuffer.allocate(length);
            while (buffer.hasRemaining()) {
                if (ch.read(buffer, offset + buffer.position()) < 0) break;
            }
            return buffer.array();
        }
    }

    static void assertHolds(Path path, long offset, long seed, int length) throws IOException {
        assertArrayEquals(bytes(seed, length), read(path, offset, length), path + " @" + offset + " lost the pattern");
    }
}
