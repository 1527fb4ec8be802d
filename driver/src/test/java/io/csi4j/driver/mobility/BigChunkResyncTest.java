package io.csi4j.driver.mobility;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.mobility.HashDeltaTest.Image;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A resync by checksums whose chunks are bigger than one stream part (more than 64 GiB allocated): each chunk is hashed
 * through a part-sized buffer on both sides, a differing one is sent as several data ranges of at most a part each
 * (never one oversized message), a zero one as one range of zeros, and the receiver's build is the new point byte for byte.
 */
class BigChunkResyncTest {
    static final int MIB = 1 << 20;

    @Test
    void aDifferingChunkBiggerThanAPartIsSentInPartsAndAppliedExactly() throws Exception {
        record Row(int chunk, int part) {}
        for (Row row : List.of(new Row(4 * MIB, SourceSender.CHUNK), new Row(4 * MIB, 64 << 10), new Row(16 * MIB, SourceSender.CHUNK))) {
            int c = row.chunk(), tail = 12345, size = 5 * c + tail;
            byte[] old = HashDeltaTest.random(size, c + row.part());
            Arrays.fill(old, 3 * c, 4 * c, (byte) 0);                       // a hole on the receiver
            var oldImage = new Image(old, List.of(new RangeCursor.Range(0, 3L * c), new RangeCursor.Range(4L * c, size - 4L * c)));
            byte[] fresh = old.clone();
            fresh[c + 7] ^= 1;                                               // chunk 1: one byte differs
            Arrays.fill(fresh, 2 * c, 3 * c, (byte) 0);                      // chunk 2: written zeros, punched
            System.arraycopy(HashDeltaTest.random(c, 99), 0, fresh, 3 * c, c); // chunk 3: data in the receiver's hole
            fresh[size - 1] ^= 1;                                            // the partial last chunk differs
            // chunks 0 and 4 are the same: nothing sent

            ChunkHashes hashes = ChunkHashes.of("old-point", oldImage, () -> false, c, 6);
            assertEquals(List.of(0L, 1L, 2L, 4L, 5L), Arrays.stream(hashes.indexes()).boxed().toList(), "the hole not listed");
            byte[] first = MessageDigest.getInstance("SHA-256").digest(Arrays.copyOf(old, c));
            assertArrayEquals(first, hashes.digest(0), "chunk 0's SHA-256, hashed in parts");

            Copies.Copy copy = new Copies().start("t", false, "peer", "old-point");
            var sink = new SendLoopTest.Received(Integer.MAX_VALUE);
            ChecksumSender.send(HashDeltaTest.image(fresh), "new-point", "vol", hashes, "peer", sink, Bandwidth.unlimited(), copy,
                    () -> false, row.part());

            String what = "chunks of " + c + ", parts of " + row.part();
            long dataRanges = 0, zeroRanges = 0;
            for (SourcePart p : sink.parts) {
                if (!(p instanceof SourcePart.Range r)) continue;
                if (r.zero()) {
                    zeroRanges++;
                    assertEquals(new SourcePart.Range(2L * c, c, null, true, SourceSender.crcOfZeros(c)), r, what);
                } else {
                    dataRanges++;
                    assertTrue(r.length() <= row.part(), what + ": a data range of " + r.length());
                }
            }
            assertEquals(1, zeroRanges, what);
            assertEquals(2L * c / row.part() + Math.ceilDiv(tail, row.part()), dataRanges, what);
            assertEquals(new SourcePart.Trailer(dataRanges + zeroRanges, 2L * c + tail), sink.parts.getLast(), what);
            byte[] built = old.clone();                                      // the reflink of the old point
            assertEquals(2L * c + tail, sink.applyTo(built), what);
            assertArrayEquals(fresh, built, what);
        }
    }
}
