package io.csi4j.driver.mobility;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.mobility.HashDeltaTest.Image;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The one send loop both senders use, through what they send: each range checked by its CRC32C and applied as a
 * receiver applies it must give the source byte for byte, no data range bigger than one stream part, the progress
 * and the counts as the plan says, and a receiver that goes away stops it.
 */
class SendLoopTest {
    static final int MIB = 1 << 20;

    /** The parts a sink took (data copied: the loop reuses its buffers once send returns). */
    static final class Received implements SourceSender.Sink {
        final List<SourcePart> parts = new ArrayList<>();
        final int acceptAtMost;

        Received(int acceptAtMost) { this.acceptAtMost = acceptAtMost; }

        @Override
        public boolean send(SourcePart part) {
            if (parts.size() >= acceptAtMost) return false;
            if (part instanceof SourcePart.Range r && !r.zero()) {
                byte[] copy = new byte[r.data().remaining()];
                r.data().duplicate().get(copy);
                part = new SourcePart.Range(r.offset(), r.length(), ByteBuffer.wrap(copy), false, r.crc32c());
            }
            parts.add(part);
            return true;
        }

        /** The ranges applied over {@code base} as a receiver does (CRC32C checked, zeros punched); the data bytes. */
        long applyTo(byte[] base) {
            long data = 0;
            for (SourcePart part : parts) {
                if (!(part instanceof SourcePart.Range r)) continue;
                int from = (int) r.offset(), length = (int) r.length();
                if (r.zero()) {
                    assertEquals(SourceSender.crcOfZeros(length), r.crc32c(), "the CRC32C of zeros at " + from);
                    Arrays.fill(base, from, from + length, (byte) 0);
                } else {
                    assertEquals(length, r.data().remaining());
                    assertTrue(length <= SourceSender.CHUNK, "a data range of " + length + " bytes: more than one part");
                    assertEquals(SourceSender.crc(r.data().duplicate()), r.crc32c(), "the CRC32C at " + from);
                    r.data().duplicate().get(base, from, length);
                    data += length;
                }
            }
            return data;
        }
    }

    @Test
    void aFullCopyLeavesOutZerosButCountsThem() {
        byte[] bytes = HashDeltaTest.random(5 * MIB + 300, 11);
        Arrays.fill(bytes, MIB, 3 * MIB, (byte) 0);                    // two pieces of written zeros
        Image image = HashDeltaTest.image(bytes);
        Copies.Copy copy = new Copies().start("t", false, "peer", "src");
        Received sink = new Received(Integer.MAX_VALUE);
        SendLoop.Sent sent;
        try (ChunkReader reader = new ChunkReader(image, image.allocated(() -> false))) {
            sent = SendLoop.send(reader, piece -> List.of(new HashDelta.Run(piece.offset(), piece.length(),
                    piece.zero() ? HashDelta.Action.SKIP : HashDelta.Action.DATA)), sink, Bandwidth.unlimited(), copy, "src");
        }
        assertTrue(sent.complete());
        assertEquals(bytes.length - 2L * MIB, sent.dataBytes());
        assertEquals(0, sent.zeroBytes());
        assertEquals(4, sent.ranges(), "the data pieces only");
        assertEquals(bytes.length, copy.done(), "the zeros read count as moved");
        byte[] built = new byte[bytes.length];
        assertEquals(sent.dataBytes(), sink.applyTo(built));
        assertArrayEquals(bytes, built);
    }

    @Test
    void runsInsideAPieceAreFramedAndCheckedAlone() {
        byte[] bytes = HashDeltaTest.random(2 * MIB, 12);
        Image image = HashDeltaTest.image(bytes);
        Copies.Copy copy = new Copies().start("t", false, "peer", "src");
        Received sink = new Received(Integer.MAX_VALUE);
        SendLoop.Sent sent;
        // of each piece: 100 bytes at 10 as data, 50 at 200 as zeros, the rest neither sent nor counted
        try (ChunkReader reader = new ChunkReader(image, image.allocated(() -> false))) {
            sent = SendLoop.send(reader, piece -> List.of(new HashDelta.Run(piece.offset() + 10, 100, HashDelta.Action.DATA),
                    new HashDelta.Run(piece.offset() + 200, 50, HashDelta.Action.ZERO)), sink, Bandwidth.unlimited(), copy, "src");
        }
        assertEquals(new SendLoop.Sent(4, 200, 100, sent.sendingNanos(), true), sent);
        assertEquals(300, copy.done());
        byte[] built = bytes.clone();
        sink.applyTo(built);
        byte[] expected = bytes.clone();
        for (int piece : new int[] {0, MIB}) Arrays.fill(expected, piece + 200, piece + 250, (byte) 0);
        assertArrayEquals(expected, built);
    }

    @Test
    void aReceiverThatGoesAwayStopsIt() {
        Image image = HashDeltaTest.image(HashDeltaTest.random(8 * MIB, 13));
        Copies.Copy copy = new Copies().start("t", false, "peer", "src");
        Received sink = new Received(2);
        SendLoop.Sent sent;
        try (ChunkReader reader = new ChunkReader(image, image.allocated(() -> false))) {
            sent = SendLoop.send(reader, piece -> List.of(new HashDelta.Run(piece.offset(), piece.length(), HashDelta.Action.DATA)),
                    sink, Bandwidth.unlimited(), copy, "src");
        }
        assertFalse(sent.complete());
        assertEquals(2, sent.ranges());
        assertEquals(2, sink.parts.size());
    }

    @Test
    void aResyncByChecksumsSendsWhatDiffersInOneStream() {
        byte[] old = HashDeltaTest.random(4 * MIB, 14);
        byte[] fresh = old.clone();
        fresh[3 * MIB + 5] ^= 1;
        Arrays.fill(fresh, 0, 64 << 10, (byte) 0);                     // written zeros: punched
        ChunkHashes hashes = ChunkHashes.of("old-point", HashDeltaTest.image(old), () -> false);
        Copies.Copy copy = new Copies().start("t", false, "peer", "src");
        Received sink = new Received(Integer.MAX_VALUE);
        ChecksumSender.send(HashDeltaTest.image(fresh), "new-point", "vol", hashes, "peer", sink, Bandwidth.unlimited(), copy, () -> false);
        assertEquals(new SourcePart.Header(fresh.length, "vol", "old-point", fresh.length), sink.parts.getFirst());
        SourcePart.Trailer trailer = (SourcePart.Trailer) sink.parts.getLast();
        assertEquals(new SourcePart.Trailer(2, 64 << 10), trailer, "one range of zeros, one of data");
        byte[] built = old.clone();
        assertEquals(64 << 10, sink.applyTo(built));
        assertArrayEquals(fresh, built);
        assertEquals(2 * (64 << 10), copy.done(), "what went on the wire");
    }
}
