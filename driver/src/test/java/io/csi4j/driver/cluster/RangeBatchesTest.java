package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.ImageImport;
import io.csi4j.driver.mobility.Bandwidth;
import io.csi4j.driver.mobility.Copies;
import io.csi4j.driver.mobility.RangeWriter;
import io.csi4j.driver.mobility.SourcePart;
import io.csi4j.proto.cluster.DataRange;
import io.csi4j.proto.cluster.SourceChunk;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * ReadSource's messages with several ranges each, through the wire's bytes: whatever the budget the reader asked for
 * (0: a reader from before batches, which must get one range per message), the parts decoded are the parts sent, in
 * order, each message within the budget, and the copy written through the receiver's rule is the source byte for
 * byte, the same file as the one-range-per-message stream builds. A CRC32C broken inside a batch is refused as any.
 */
class RangeBatchesTest {
    static final int K64 = 64 << 10;
    static final int MIB = 1 << 20;
    static final int SIZE = 24 * MIB;

    @TempDir
    Path tmp;

    /**
     * A delta: the receiver's base, the parts a sender sends against it, and what the copy must read as (the base with
     * each data range's new bytes and each zero range punched).
     */
    record Source(byte[] base, List<SourcePart> parts, byte[] expected) {}

    /**
     * Ranges of every kind a sender makes, ascending: scattered 64 KiB ones (a round of random writes), runs of
     * adjacent ones, odd sizes, a 1 MiB one (a part's most), big zero ranges, and more small zero ranges than one
     * message holds.
     */
    static Source source() {
        Random random = new Random(28);
        byte[] base = new byte[SIZE];
        random.nextBytes(base);
        byte[] expected = base.clone();
        List<SourcePart.Range> ranges = new ArrayList<>();
        long at = 0;
        for (int i = 0; i < 60; i++) {                              // scattered 64 KiB ranges, some adjacent
            ranges.add(data(at, K64));
            at += K64 * (1 + random.nextInt(3));
        }
        ranges.add(data(at, 100));
        ranges.add(data(at + 4096, 4096 * 3 + 7));
        at += MIB;
        ranges.add(data(at, MIB));
        at += MIB;
        ranges.add(zero(at, 3L * MIB));                              // a hole bigger than a part: one range, no data
        at += 3L * MIB;
        for (int i = 0; i < RangeBatches.MAX_RANGES + 300; i++) {    // more zero ranges than a message holds
            ranges.add(zero(at, 512));
            at += 1024;
        }
        for (int i = 0; i < 20; i++) {
            ranges.add(data(at, K64 + 512 * i));
            at += 2L * K64 + 512 * i;
        }
        assertTrue(at < SIZE);
        for (SourcePart.Range r : ranges) {
            int from = (int) r.offset(), to = (int) (r.offset() + r.length());
            if (r.zero()) {
                Arrays.fill(expected, from, to, (byte) 0);
            } else {
                byte[] fresh = new byte[to - from];
                random.nextBytes(fresh);
                System.arraycopy(fresh, 0, expected, from, fresh.length);
            }
        }
        List<SourcePart> parts = new ArrayList<>();
        parts.add(new SourcePart.Header(SIZE, "vol-1", "snap-0", ranges.stream().mapToLong(SourcePart.Range::length).sum()));
        parts.addAll(ranges);
        parts.add(new SourcePart.Trailer(ranges.size(), ranges.stream().filter(r -> !r.zero()).mapToLong(SourcePart.Range::length).sum()));
        return new Source(base, parts, expected);
    }

    static SourcePart.Range data(long offset, int length) { return new SourcePart.Range(offset, length, null, false, 0); }

    static SourcePart.Range zero(long offset, long length) { return new SourcePart.Range(offset, length, null, true, 0); }

    /**
     * The messages of {@code source} through a batcher of {@code budget}, as the wire carries them (serialized on
     * sending). Each range's bytes are in one buffer the "sender" overwrites once send returns, as SendLoop does.
     */
    static List<byte[]> send(Source source, long budget) {
        List<byte[]> wire = new ArrayList<>();
        RangeBatches batches = new RangeBatches(budget, chunk -> wire.add(chunk.toByteArray()));
        byte[] buffer = new byte[MIB];
        for (SourcePart part : source.parts()) {
            if (part instanceof SourcePart.Range r && !r.zero()) {
                System.arraycopy(source.expected(), (int) r.offset(), buffer, 0, (int) r.length());
                part = new SourcePart.Range(r.offset(), r.length(), ByteBuffer.wrap(buffer, 0, (int) r.length()), false,
                        crc(buffer, (int) r.length()));
            } else if (part instanceof SourcePart.Range r) {
                part = new SourcePart.Range(r.offset(), r.length(), null, true, crc(new byte[(int) r.length()], (int) r.length()));
            }
            assertTrue(batches.send(part));
            Arrays.fill(buffer, (byte) 0x5a);                         // reused: a batch must not point at it
        }
        return wire;
    }

    static List<SourcePart> decode(List<byte[]> wire) throws IOException {
        List<SourcePart> parts = new ArrayList<>();
        for (byte[] message : wire) parts.addAll(CopyWire.parts(SourceChunk.parseFrom(message), "node-a"));
        return parts;
    }

    /** The parts written as the receiver writes them (every range checked) into a copy of the base; its bytes. */
    byte[] receive(Source source, List<SourcePart> parts, String name) throws IOException {
        Path file = tmp.resolve(name);
        Files.write(file, source.base());
        try (FileImport target = new FileImport(file)) {
            var header = (SourcePart.Header) parts.getFirst();
            RangeWriter writer = new RangeWriter(target, header, name, "node-a", Bandwidth.unlimited(),
                    new Copies().start(name, true, "node-a", "snap-1"));
            for (SourcePart part : parts.subList(1, parts.size() - 1)) writer.write((SourcePart.Range) part);
            var trailer = (SourcePart.Trailer) parts.getLast();
            assertEquals(trailer.ranges(), writer.ranges(), "the trailer counts every range, batched or not");
            assertEquals(trailer.dataBytes(), writer.dataBytes());
        }
        return Files.readAllBytes(file);
    }

    @ParameterizedTest(name = "budget {0} bytes")
    @ValueSource(longs = {0, K64, 256 * 1024 + 1, MIB, 8 * MIB})
    void theStreamCarriesTheSamePartsAndBuildsTheSameBytes(long budget) throws IOException {
        Source source = source();
        List<byte[]> wire = send(source, budget);
        long cap = Math.min(budget, CopyWire.BATCH_BYTES);
        int batches = 0;
        for (byte[] message : wire) {
            SourceChunk chunk = SourceChunk.parseFrom(message);
            if (chunk.getPartCase() != SourceChunk.PartCase.RANGES) continue;
            batches++;
            assertTrue(budget > 0, "a reader that did not ask for batches got one");
            List<DataRange> ranges = chunk.getRanges().getRangesList();
            long data = ranges.stream().mapToLong(r -> r.getData().size()).sum();
            assertTrue(data <= cap, "a message of " + data + " data bytes over its budget " + cap);
            assertTrue(ranges.size() >= 2 && ranges.size() <= RangeBatches.MAX_RANGES, ranges.size() + " ranges in a message");
            assertTrue(message.length <= CopyWire.BATCH_BYTES + 64 * 1024, "a message of " + message.length + " bytes");
        }
        List<SourcePart> parts = decode(wire);
        assertEquals(source.parts().size(), parts.size());
        if (budget == 0) {
            assertEquals(source.parts().size(), wire.size(), "one message per part, as an older reader reads them");
        } else {
            assertTrue(batches > 0 && wire.size() < source.parts().size() / 2, wire.size() + " messages for " + parts.size() + " parts");
        }
        for (int i = 1; i < parts.size() - 1; i++) {
            var sent = (SourcePart.Range) source.parts().get(i);
            var got = (SourcePart.Range) parts.get(i);
            assertEquals(List.of(sent.offset(), sent.length(), sent.zero()), List.of(got.offset(), got.length(), got.zero()), "range " + i);
        }
        byte[] built = receive(source, parts, "copy-" + budget);
        assertArrayEquals(source.expected(), built);
        assertArrayEquals(receive(source, decode(send(source, 0)), "one-per-message-" + budget), built,
                "the same copy as the one-range-per-message stream");
    }

    @Test
    void aBrokenCrcInsideABatchIsRefusedAsAnyOther() throws IOException {
        Source source = source();
        List<byte[]> wire = send(source, MIB);
        int at = -1;
        for (int i = 0; i < wire.size() && at < 0; i++) if (SourceChunk.parseFrom(wire.get(i)).getPartCase() == SourceChunk.PartCase.RANGES) at = i;
        SourceChunk batch = SourceChunk.parseFrom(wire.get(at));
        DataRange third = batch.getRanges().getRanges(2);
        assertTrue(third.getData().size() > 0);
        SourceChunk.Builder broken = batch.toBuilder();
        broken.getRangesBuilder().setRanges(2, third.toBuilder().setCrc32C(third.getCrc32C() ^ 1));
        wire.set(at, broken.build().toByteArray());
        var e = assertThrows(DomainException.class, () -> receive(source, decode(wire), "broken"));
        assertEquals(DomainException.Kind.ABORTED, e.kind());
        assertEquals("the copy from node 'node-a' failed its check at offset " + third.getOffset()
                + " (CRC32C does not match); nothing was kept, retry", e.getMessage());
    }

    @Test
    void anEmptyBatchBreaksTheProtocol() {
        SourceChunk empty = SourceChunk.newBuilder().setRanges(io.csi4j.proto.cluster.DataRanges.getDefaultInstance()).build();
        var e = assertThrows(DomainException.class, () -> CopyWire.parts(empty, "node-a"));
        assertEquals(DomainException.Kind.FAILED, e.kind());
    }

    @Test
    void aReaderAsksForBatchesAndAnOlderOneReadsAsNone() {
        var query = new io.csi4j.driver.mobility.SourceQuery(new io.csi4j.driver.model.ContentSource.FromSnapshot("snap-1"), List.of(), "node-b");
        assertEquals(CopyWire.BATCH_BYTES, CopyWire.request(query).getRangeBatchBytes());
        var older = CopyWire.request(query).toBuilder().clearRangeBatchBytes().build();
        assertEquals(0, older.getRangeBatchBytes(), "the field unset: one range per message");
    }

    static int crc(byte[] bytes, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, length);
        return (int) crc.getValue();
    }

    /** An import into a plain file over its base: writes where told, zeros written over (what a punched hole reads as). */
    static final class FileImport implements ImageImport {
        final FileChannel channel;

        FileImport(Path file) throws IOException {
            channel = FileChannel.open(file, StandardOpenOption.WRITE);
        }

        @Override
        public void write(ByteBuffer data, long offset) {
            try {
                ByteBuffer d = data.duplicate();
                while (d.hasRemaining()) channel.write(d, offset + d.position() - data.position());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void zero(long offset, long length) {
            write(ByteBuffer.allocate(Math.toIntExact(length)), offset);
        }

        @Override
        public long commit() {
            throw new UnsupportedOperationException("not committed here");
        }

        @Override
        public void close() {
            try {
                channel.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
