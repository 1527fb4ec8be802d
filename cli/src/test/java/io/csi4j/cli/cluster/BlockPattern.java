package io.csi4j.cli.cluster;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

/**
 * Known data for a copy to carry: {@code extents} extents of 1 MiB at every other MiB (holes between them), of
 * 4 KiB blocks each holding its block number, the seed, bytes drawn from both, and a CRC32C of the rest. A torn
 * copy can then be told block by block: intact, zero (never arrived), or wrong.
 */
final class BlockPattern {
    static final long MIB = 1L << 20;
    static final int BLOCK = 4096;

    private final long seed;
    private final int extents;

    BlockPattern(long seed, int extents) {
        this.seed = seed;
        this.extents = extents;
    }

    /** Writes the pattern into {@code image} (an existing file at least {@code 2 * extents} MiB long), fsynced. */
    void write(Path image) throws IOException {
        try (var ch = FileChannel.open(image, StandardOpenOption.WRITE)) {
            ByteBuffer extent = ByteBuffer.allocate((int) MIB);
            for (int e = 0; e < extents; e++) {
                extent.clear();
                long offset = 2L * e * MIB;
                for (long b = offset / BLOCK; b < (offset + MIB) / BLOCK; b++) extent.put(block(b));
                ch.write(extent.flip(), offset);
            }
            ch.force(true);
        }
    }

    private byte[] block(long number) {
        ByteBuffer b = ByteBuffer.allocate(BLOCK);
        b.putLong(number).putLong(seed);
        var bytes = new SplittableRandom(seed ^ (number * 0x9E3779B97F4A7C15L));
        while (b.position() < BLOCK - 4) b.put((byte) bytes.nextInt());
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, BLOCK - 4);
        return b.putInt((int) crc.getValue()).array();
    }

    /** Where an image differs from the pattern: of the written blocks, how many are intact, zero, wrong. */
    String describe(Path image) {
        long intact = 0, zero = 0, wrong = 0, firstBad = -1;
        try (var ch = FileChannel.open(image, StandardOpenOption.READ)) {
            ByteBuffer buffer = ByteBuffer.allocate(BLOCK);
            for (int e = 0; e < extents; e++) {
                for (long b = 2L * e * MIB / BLOCK; b < (2L * e + 1) * MIB / BLOCK; b++) {
                    buffer.clear();
                    while (buffer.hasRemaining() && ch.read(buffer, b * BLOCK + buffer.position()) > 0) { /* fill */ }
                    byte[] got = Arrays.copyOf(buffer.array(), buffer.position());
                    if (Arrays.equals(got, block(b))) {
                        intact++;
                        continue;
                    }
                    if (firstBad < 0) firstBad = b;
                    if (Arrays.equals(got, new byte[got.length])) zero++; else wrong++;
                }
            }
            return "size " + ch.size() + ", of " + extents * MIB / BLOCK + " written blocks: " + intact + " intact, " + zero
                    + " zero, " + wrong + " wrong, first bad block " + firstBad;
        } catch (IOException e) {
            return "unreadable: " + e;
        }
    }
}
