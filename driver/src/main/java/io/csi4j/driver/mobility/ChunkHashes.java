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
    /**
     * The coarsest: 4 TiB allocated at {@link #MAX_CHUNKS} chunks; more gets a full copy. A chunk bigger than one stream
     * part ({@link SourceSender#CHUNK}) is hashed and sent in parts, never held whole in memory.
     */
    public static final int MAX_CHUNK = 64 << 20;
    /** Chunks listed at most: 40 bytes each on the wire, so about 2.5 MiB, under gRPC's 4 MiB message limit. */
    public static final int MAX_CHUNKS = 1 << 16;
    /** The chunk sizes from {@link #MIN_CHUNK} to {@link #MAX_CHUNK}, doubling. */
    static final int SIZES = Integer.numberOfTrailingZeros(MAX_CHUNK / MIN_CHUNK) + 1;

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
        Touched t = new Touched();
        for (long[] r : ranges) t.add(r[0], r[1]);
        return t.count(size);
    }

    /**
     * The chunks of every size that ranges added in ascending order touch, counted as they come: the extent map is
     * walked once to choose the size, in memory bounded whatever its length.
     */
    static final class Touched {
        private final long[] count = new long[SIZES];
        private final long[] last = new long[SIZES];

        Touched() { Arrays.fill(last, -1); }

        void add(long offset, long length) {
            if (length <= 0) return;
            for (int k = 0; k < SIZES; k++) {
                long size = (long) MIN_CHUNK << k;
                long first = Math.max(offset / size, last[k] + 1), end = (offset + length - 1) / size;
                if (end >= first) count[k] += end - first + 1;
                last[k] = Math.max(last[k], end);
            }
        }

        long count(int size) { return count[Integer.numberOfTrailingZeros(size / MIN_CHUNK)]; }

        /** Whether even the coarsest chunk is touched more than {@link #MAX_CHUNKS} times: no list can hold it. */
        boolean tooMany() { return count[SIZES - 1] > MAX_CHUNKS; }
    }

    /**
     * The digests of {@code image} (the receiver's replica of {@code baseSnapshotId}): its allocated ranges read chunk
     * by chunk in parts of at most {@link SourceSender#CHUNK}, zero chunks left out. Null when the image is too big to
     * list at the coarsest chunk (a full copy instead). Two walks of the extent map: the chunk size, then the digests.
     */
    public static ChunkHashes of(String baseSnapshotId, SourceImage image, BooleanSupplier cancelled) {
        Touched touched = new Touched();
        try (RangeCursor allocated = image.allocated(cancelled)) {
            for (RangeCursor.Range r = allocated.next(); r != null; r = allocated.next()) {
                touched.add(r.offset(), Math.min(r.end(), image.sizeBytes()) - r.offset());
                if (touched.tooMany()) return null;
            }
        }
        int size = chunkSize(touched::count);
        return size == 0 ? null : of(baseSnapshotId, image, cancelled, size, touched.count(size));
    }

    /** The digests of {@code image} in chunks of {@code size}, {@code most} at most (the chunks its ranges touch). */
    static ChunkHashes of(String baseSnapshotId, SourceImage image, BooleanSupplier cancelled, int size, long most) {
        if (most > MAX_CHUNKS) throw new IllegalArgumentException(most + " chunks; at most " + MAX_CHUNKS);
        long[] indexes = new long[(int) most];
        byte[] digests = new byte[indexes.length * DIGEST];
        MessageDigest sha = sha256();
        ByteBuffer buffer = ByteBuffer.allocate(Math.min(size, SourceSender.CHUNK));
        int listed = 0;
        long last = -1;
        try (RangeCursor allocated = image.allocated(cancelled)) {
            for (RangeCursor.Range r = allocated.next(); r != null; r = allocated.next()) {
                long end = Math.min(r.end(), image.sizeBytes());
                for (long i = Math.max(r.offset() / size, last + 1); end > r.offset() && i <= (end - 1) / size; i++) {
                    if (cancelled.getAsBoolean()) throw new java.util.concurrent.CancellationException("hashing " + baseSnapshotId);
                    last = i;
                    if (listed == indexes.length) throw new IllegalStateException(baseSnapshotId + "'s extent map changed while hashed");
                    long offset = i * size;
                    if (digest(image, offset, (int) Math.min(size, image.sizeBytes() - offset), buffer, sha, digests, listed * DIGEST)) {
                        indexes[listed++] = i;
                    }
                }
            }
        }
        return new ChunkHashes(baseSnapshotId, size, Arrays.copyOf(indexes, listed), Arrays.copyOf(digests, listed * DIGEST));
    }

    /**
     * Reads {@code length} bytes at {@code offset} in parts of {@code buffer}'s capacity (past the image's end: zeros);
     * false when they all read as zeros, else true with their SHA-256 written to {@code into} at {@code at}.
     */
    static boolean digest(SourceImage image, long offset, int length, ByteBuffer buffer, MessageDigest sha, byte[] into, int at) {
        sha.reset();
        boolean zero = true;
        for (int done = 0; done < length; ) {
            int n = Math.min(buffer.capacity(), length - done);
            buffer.clear().limit(n);
            int read = Math.max(0, image.read(buffer, offset + done));
            byte[] bytes = buffer.array();
            if (read < n) Arrays.fill(bytes, read, n, (byte) 0);
            zero = zero && SourceSender.isZero(bytes, n);
            sha.update(bytes, 0, n);
            done += n;
        }
        if (zero) return false;
        try {
            sha.digest(into, at, DIGEST);
        } catch (java.security.DigestException e) {
            throw new IllegalStateException("a SHA-256 digest is 32 bytes", e);
        }
        return true;
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
