package io.csi4j.driver.mobility;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.engine.SourceImage;
import io.csi4j.driver.mobility.HashDelta.Action;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * The resync by checksums without I/O: the receiver's digests of its old image, the sender's candidates and plan over
 * the new one, applied as the receiver applies a stream (a copy of the old image cut or grown to the new size, data
 * written, zeros punched), must give the new image byte for byte, sending only the chunks that differ.
 */
class HashDeltaTest {
    static final int K64 = 64 << 10;
    static final int MIB = 1 << 20;

    /** An image in memory whose allocated ranges are given (the rest reads as zeros: holes). */
    record Image(byte[] bytes, List<RangeCursor.Range> allocated) implements SourceImage {
        @Override public long sizeBytes() { return bytes.length; }

        @Override
        public RangeCursor allocated(BooleanSupplier cancelled) {
            var it = allocated.iterator();
            return new RangeCursor() {
                @Override public Range next() { return it.hasNext() ? it.next() : null; }
                @Override public long capacityBytes() { return bytes.length; }
                @Override public Method method() { return Method.SEEK_DATA; }
                @Override public void close() {}
            };
        }

        @Override
        public int read(ByteBuffer into, long offset) {
            int n = (int) Math.max(0, Math.min(into.remaining(), bytes.length - offset));
            into.put(bytes, (int) offset, n);
            return n;
        }

        @Override public void close() {}
    }

    /** What a resync sent: the data bytes, the zero bytes, and the image the receiver built. */
    record Resync(long dataBytes, long zeroBytes, byte[] built) {}

    static Resync resync(Image old, Image fresh) {
        ChunkHashes hashes = ChunkHashes.of("old-point", old, () -> false);
        List<RangeCursor.Range> candidates = new ArrayList<>();
        try (RangeCursor cursor = HashDelta.candidates(fresh.allocated(() -> false), fresh.sizeBytes(), hashes)) {
            for (RangeCursor.Range r = cursor.next(); r != null; r = cursor.next()) candidates.add(r);
        }
        byte[] built = Arrays.copyOf(old.bytes(), fresh.bytes().length);   // the reflink of the old image, cut or grown
        long data = 0, zeros = 0;
        long last = -1;
        for (RangeCursor.Range r : candidates) {
            if (r.offset() <= last) throw new AssertionError("candidates not ascending and joined: " + candidates);
            if (r.offset() % hashes.chunkBytes() != 0) throw new AssertionError("a candidate off a chunk boundary: " + r);
            last = r.end();
            for (long at = r.offset(); at < r.end(); at += SourceSender.CHUNK) {    // the ChunkReader's pieces
                int length = (int) Math.min(SourceSender.CHUNK, r.end() - at);
                byte[] piece = Arrays.copyOfRange(fresh.bytes(), (int) at, (int) at + length);
                for (HashDelta.Run run : HashDelta.plan(hashes, at, piece, length)) {
                    int from = (int) run.offset();
                    if (run.action() == Action.DATA) {
                        System.arraycopy(fresh.bytes(), from, built, from, run.length());
                        data += run.length();
                    } else {
                        Arrays.fill(built, from, from + run.length(), (byte) 0);
                        zeros += run.length();
                    }
                }
            }
        }
        return new Resync(data, zeros, built);
    }

    static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    static List<RangeCursor.Range> whole(int size) {
        return List.of(new RangeCursor.Range(0, size));
    }

    static Image image(byte[] bytes) {
        return new Image(bytes, whole(bytes.length));
    }

    @Test
    void theRuleForOneChunk() {
        byte[] a = {1}, b = {2};
        record Row(String what, boolean zero, byte[] theirs, byte[] ours, Action expected) {}
        for (Row row : List.of(
                new Row("not listed (zeros there), zeros here", true, null, null, Action.SKIP),
                new Row("not listed (zeros there), data here", false, null, a, Action.DATA),
                new Row("listed, zeros here: punched", true, a, null, Action.ZERO),
                new Row("listed, same digest", false, a, a.clone(), Action.SKIP),
                new Row("listed, another digest", false, a, b, Action.DATA))) {
            assertEquals(row.expected(), HashDelta.decide(row.zero(), row.theirs(), row.ours()), row.what());
        }
    }

    @Test
    void theSameImageSendsNothing() {
        byte[] bytes = random(3 * MIB, 1);
        var r = resync(image(bytes), image(bytes.clone()));
        assertEquals(0, r.dataBytes() + r.zeroBytes());
        assertArrayEquals(bytes, r.built());
    }

    @Test
    void oneChangedByteSendsItsChunkOnly() {
        byte[] old = random(3 * MIB, 2);
        byte[] fresh = old.clone();
        fresh[5 * K64 + 17] ^= 1;
        fresh[2 * MIB] ^= 1;
        var r = resync(image(old), image(fresh));
        assertEquals(2L * K64, r.dataBytes(), "two 64 KiB chunks");
        assertArrayEquals(fresh, r.built());
    }

    @Test
    void holesAndZerosOnEitherSide() {
        int size = 4 * MIB;
        byte[] old = random(size, 3);
        Arrays.fill(old, MIB, 2 * MIB, (byte) 0);                         // a hole on the receiver
        var oldImage = new Image(old, List.of(new RangeCursor.Range(0, MIB), new RangeCursor.Range(2 * MIB, 2 * MIB)));
        byte[] fresh = old.clone();
        System.arraycopy(random(K64, 4), 0, fresh, MIB + K64, K64);        // data where the receiver has a hole
        Arrays.fill(fresh, 3 * MIB, 4 * MIB, (byte) 0);                    // a hole where the receiver has data
        Arrays.fill(fresh, 0, K64, (byte) 0);                              // written zeros where the receiver has data
        var freshImage = new Image(fresh, List.of(new RangeCursor.Range(0, 2 * MIB), new RangeCursor.Range(2 * MIB, MIB)));
        var r = resync(oldImage, freshImage);
        assertEquals(K64, r.dataBytes(), "only the new data in the receiver's hole");
        assertEquals(MIB + K64, r.zeroBytes(), "the hole and the written zeros punched");
        assertArrayEquals(fresh, r.built());
    }

    @Test
    void anExpansionWithAPartialLastChunkOnBothSides() {
        int oldSize = 3 * MIB + 1000, freshSize = 5 * MIB + 123;
        byte[] old = random(oldSize, 5);
        byte[] fresh = Arrays.copyOf(old, freshSize);
        // the old last chunk grows (same bytes, then zeros): differs, sent whole; new data past the old end
        System.arraycopy(random(3000, 6), 0, fresh, 4 * MIB + 10, 3000);
        fresh[freshSize - 1] = 7;                                          // in the new partial last chunk
        var freshImage = new Image(fresh, List.of(new RangeCursor.Range(0, oldSize), new RangeCursor.Range(4 * MIB, freshSize - 4 * MIB)));
        var r = resync(image(old), freshImage);
        assertArrayEquals(fresh, r.built());
        assertEquals(K64 + K64 + (freshSize - (5 * MIB)), r.dataBytes(), "the grown last chunk, the new data's chunk, the new last chunk");

        // and a volume of the same size whose last partial chunk changed
        byte[] same = old.clone();
        same[oldSize - 1] ^= 1;
        var last = resync(image(old), image(same));
        assertEquals(oldSize - 3 * MIB, last.dataBytes(), "the partial last chunk, exactly");
        assertArrayEquals(same, last.built());
    }

    @Test
    void aSmallerNewPointIsCutToItsSize() {
        byte[] old = random(2 * MIB, 7);
        byte[] fresh = Arrays.copyOf(old, MIB + 5);
        var r = resync(image(old), image(fresh));
        assertEquals(MIB + 5 - MIB, r.dataBytes(), "the cut last chunk differs");
        assertArrayEquals(fresh, r.built());
    }

    @Test
    void theChunkGrowsWithTheImageAndAListTooLongIsRefused() {
        assertEquals(K64, ChunkHashes.chunkSize(size -> (4L << 30) / size));          // 4 GiB: 65536 chunks of 64 KiB
        assertEquals(4 * K64, ChunkHashes.chunkSize(size -> (10L << 30) / size));    // 10 GiB: 256 KiB chunks
        assertEquals(MIB, ChunkHashes.chunkSize(size -> (64L << 30) / size));
        // past 64 GiB the chunk keeps doubling, bigger than one stream part, up to 64 MiB: 4 TiB allocated
        record Row(long allocated, int chunk) {}
        for (Row row : List.of(new Row(65L << 30, 2 * MIB), new Row(100L << 30, 2 * MIB), new Row(128L << 30, 2 * MIB),
                new Row((128L << 30) + 1, 4 * MIB), new Row(1L << 40, 16 * MIB), new Row(4L << 40, 64 * MIB),
                new Row((4L << 40) + 1, 0))) {                                         // more: a full copy
            assertEquals(row.chunk(), ChunkHashes.chunkSize(size -> Math.ceilDiv(row.allocated(), size)), row.allocated() + " bytes allocated");
        }
        assertEquals(64 * MIB, ChunkHashes.MAX_CHUNK);
        long[][] ranges = {{0, 10}, {K64 - 1, 2}, {3L * K64, K64}};
        assertEquals(3, ChunkHashes.touched(ranges, K64));
        assertEquals(1, ChunkHashes.touched(ranges, 4 * K64));
        // counted as the extent map is walked, every size at once: 100 GiB in 4 KiB extents 1.5 MiB apart
        var touched = new ChunkHashes.Touched();
        long extents = (100L << 30) / (3 * MIB / 2);
        for (long i = 0; i < extents; i++) touched.add(i * (3 * MIB / 2), 4096);
        assertEquals(extents, touched.count(MIB), "each in a 1 MiB chunk of its own");
        assertEquals(2 * MIB, ChunkHashes.chunkSize(touched::count), extents + " extents: " + touched.count(2 * MIB) + " 2 MiB chunks");
        assertEquals(false, touched.tooMany());
        var huge = new ChunkHashes.Touched();
        huge.add(0, (4L << 40) + 1);
        assertEquals(true, huge.tooMany(), "more than 4 TiB allocated: no list");
    }

    @Test
    void aBadListIsRefused() {
        byte[] d = new byte[64];
        assertThrows(DomainException.class, () -> new ChunkHashes("p", 3 * K64, new long[] {0}, new byte[32]));
        assertThrows(DomainException.class, () -> new ChunkHashes("p", 2 * ChunkHashes.MAX_CHUNK, new long[] {0}, new byte[32]));
        assertThrows(DomainException.class, () -> new ChunkHashes("p", K64, new long[] {1, 1}, d));
        assertThrows(DomainException.class, () -> new ChunkHashes("p", K64, new long[] {1, 2}, new byte[63]));
        assertNull(new ChunkHashes("p", K64, new long[] {1, 3}, d).digest(2));
    }

    @Test
    void aBigSparseImageListsOnlyItsData() {
        byte[] old = new byte[64 * MIB];
        List<RangeCursor.Range> allocated = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            System.arraycopy(random(4096, 10 + i), 0, old, i * 8 * MIB, 4096);
            allocated.add(new RangeCursor.Range((long) i * 8 * MIB, 4096));
        }
        var hashes = ChunkHashes.of("p", new Image(old, allocated), () -> false);
        assertEquals(8, hashes.indexes().length);
        assertEquals(8 * (8 + 32), hashes.wireBytes());
    }
}
