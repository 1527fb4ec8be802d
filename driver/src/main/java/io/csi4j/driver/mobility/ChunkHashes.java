package io.csi4j.driver.mobility;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.engine.SourceImage;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.function.BooleanSupplier;

/**
 * The SHA-256 of each fixed-size chunk of an old image a receiver holds (its replica of a point the sender never had):
 * what a resync by checksums sends instead of a common base (docs/replication.md, "Resync by checksums"). Chunk
 * {@code i} is {@code [i * chunkBytes, min((i + 1) * chunkBytes, size))} of the image; a chunk that reads as zeros
 * (a hole, or written zeros) is left out, so a chunk not listed reads as zeros in the receiver's copy of the old image
 * (also past its end: the new image is that copy cut or grown to the new size, which reads zeros there). Indexes are
 * ascending; digests are 32 bytes each, in the same order.
 * <p>SHA-256, not the stream's CRC32C: a chunk whose digest matches is not sent at all, so a collision would keep old
 * bytes as new ones. No SHA-256 collision is known, and an accidental one among even 2^32 chunks has a chance near
 * 2^-193; the sender hashes its own bytes, so nothing the receiver says can make it skip a chunk whose digest differs.
 */
public record ChunkHashes(String baseSnapshotId, int chunkBytes, long[] indexes, byte[] digests) {
    public static final int DIGEST = 32;
    /** The finest chunk: a few 4 KiB writes cost this much each on the wire, not the extent-exact delta's 4 KiB. */
    public static final int MIN_CHUNK = 64 << 10;
    /** The coarsest: one stream message ({@link SourceSender#CHUNK}), which every chunk size divides. */
    public static final int MAX_CHUNK = SourceSender.CHUNK;
    /** Chunks listed at most: 40 bytes each on the wire, so about 2.5 MiB, under gRPC's 4 MiB message limit. */
    public static final int MAX_CHUNKS = 1 << 16;

    public ChunkHashes {
        if (Integer.bitCount(chunkBytes) != 1 || chunkBytes < MIN_CHUNK || chunkBytes > MAX_CHUNK) {
            throw DomainException.invalid("a chunk of " + chunkBytes + " bytes is not a power of two from " + MIN_CHUNK + " to " + MAX_CHUNK);
        }
        if (indexes.length > MAX_CHUNKS) throw DomainException.invalid(indexes.length + " chunk digests; at most " + MAX_CHUNKS);
        if (digests.length != indexes.length * DIGEST) {
            throw DomainException.invalid(indexes.length + " chunk indexes with " + digests.length + " bytes of digests");
        }
        for (int i = 0; i < indexes.length; i++) {
            if (indexes[i] < 0 || (i > 0 && indexes[i] <= indexes[i - 1])) throw DomainException.invalid("chunk indexes not ascending at " + i);
        }
    }

    /** The receiver's digest of chunk {@code index}, or null when it did not list it (it reads as zeros there). */
    byte[] digest(long index) {
        int at = Arrays.binarySearch(indexes, index);
        return at < 0 ? null : Arrays.copyOfRange(digests, at * DIGEST, (at + 1) * DIGEST);
    }

    /** Bytes these digests take on the wire (indexes counted at 8 bytes). */
    public long wireBytes() { return indexes.length * (8L + DIGEST); }

    /** The finest chunk size from {@link #MIN_CHUNK} whose {@code count} is at most {@link #MAX_CHUNKS}; 0 when none is. */
    static int chunkSize(java.util.function.IntToLongFunction count) {
        for (int size = MIN_CHUNK; size <= MAX_CHUNK; size <<= 1) {
            if (count.applyAsLong(size) <= MAX_CHUNKS) return size;
        }
        return 0;
    }

    /** How many chunks of {@code size} the ranges (ascending, not overlapping) touch. */
    static long touched(long[][] ranges, int size) {
        long count = 0;
        long last = -1;
        for (long[] r : ranges) {
            long first = Math.max(r[0] / size, last + 1);
            long end = (r[0] + r[1] - 1) / size;
            if (end >= first) count += end - first + 1;
            last = Math.max(last, end);
        }
        return count;
    }

    /**
     * The digests of {@code image} (the receiver's replica of {@code baseSnapshotId}): its allocated ranges read chunk
     * by chunk, zero chunks left out. Null when the image is too big to list at the coarsest chunk (a full copy instead).
     */
    public static ChunkHashes of(String baseSnapshotId, SourceImage image, BooleanSupplier cancelled) {
        // the allocated ranges widened to the finest chunks and joined: what any chunk size touches, in bounded memory
        java.util.List<long[]> held = new java.util.ArrayList<>();
        try (RangeCursor allocated = image.allocated(cancelled)) {
            for (RangeCursor.Range r = allocated.next(); r != null; r = allocated.next()) {
                long from = r.offset() / MIN_CHUNK * MIN_CHUNK, to = Math.ceilDiv(r.end(), MIN_CHUNK) * MIN_CHUNK;
                long[] last = held.isEmpty() ? null : held.getLast();
                if (last != null && from <= last[0] + last[1]) {
                    last[1] = Math.max(last[1], to - last[0]);
                } else if (held.size() == (MAX_CHUNK / MIN_CHUNK) * MAX_CHUNKS) {
                    return null;                                   // more runs than the coarsest list could hold chunks
                } else {
                    held.add(new long[] {from, to - from});
                }
            }
        }
        long[][] ranges = held.toArray(long[][]::new);
        int size = chunkSize(s -> touched(ranges, s));
        if (size == 0) return null;
        long[] indexes = new long[(int) touched(ranges, size)];
        byte[] digests = new byte[indexes.length * DIGEST];
        MessageDigest sha = sha256();
        ByteBuffer buffer = ByteBuffer.allocate(size);
        int listed = 0;
        long last = -1;
        for (long[] r : ranges) {
            for (long i = Math.max(r[0] / size, last + 1); i <= (r[0] + r[1] - 1) / size; i++) {
                if (cancelled.getAsBoolean()) throw new java.util.concurrent.CancellationException("hashing " + baseSnapshotId);
                last = i;
                long offset = i * size;
                int length = (int) Math.min(size, image.sizeBytes() - offset);
                if (length <= 0) break;
                buffer.clear().limit(length);
                int read = image.read(buffer, offset);
                byte[] bytes = buffer.array();
                if (read < length) Arrays.fill(bytes, read, length, (byte) 0);
                if (SourceSender.isZero(bytes, length)) continue;   // reads as zeros: not listed
                sha.update(bytes, 0, length);
                indexes[listed] = i;
                System.arraycopy(sha.digest(), 0, digests, listed * DIGEST, DIGEST);
                listed++;
            }
        }
        return new ChunkHashes(baseSnapshotId, size, Arrays.copyOf(indexes, listed), Arrays.copyOf(digests, listed * DIGEST));
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    @Override
    public String toString() {
        return "ChunkHashes[" + baseSnapshotId + ", " + indexes.length + " chunks of " + chunkBytes + " bytes]";
    }
}
