package io.csi4j.driver.engine.image;

import io.csi4j.driver.os.Fallocate;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.io.RandomAccessFile;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The journal of a secondary's round applied in place (docs/inplace-rounds.md, 1.2): every received range, written
 * and synced before the image is touched, so that a crash mid-apply is finished from it at start-up. One file:
 * <pre>
 * header  : magic "CSI4JRJ1", volume id, base point, target point (each a u16 length and UTF-8), the point's size (i64)
 * record* : kind (1 data, 2 zero), offset (i64), length (i64), CRC32C of the data (i32, 0 for zero), the data
 * trailer : kind 0x7F, ranges (i64), data bytes (i64), CRC32C of the header and every record's fixed fields (i32)
 * </pre>
 * Nothing may follow the trailer. A journal that fails any check is refused whole ({@link Corrupt}). Applying it is
 * idempotent: every record in order, pwrite or punch, so a crash half-way and a second apply end where one apply does.
 */
final class RoundJournal {
    private static final byte[] MAGIC = "CSI4JRJ1".getBytes(StandardCharsets.US_ASCII);
    private static final byte DATA = 1;
    private static final byte ZERO = 2;
    private static final byte END = 0x7F;
    /** kind, offset, length, crc */
    static final int RECORD_BYTES = 1 + 8 + 8 + 4;
    /** end mark, record count, data bytes, crc */
    static final int TRAILER_BYTES = 1 + 8 + 8 + 4;
    /** What a journal costs beyond its data: the header's and trailer's bound, and each record's fixed part. */
    static long overhead(long ranges) {
        return 1024 + ranges * RECORD_BYTES;
    }

    /** What the journal is of: the volume, the point the image holds and the one the records make of it. */
    record Header(String volumeId, String basePoint, String targetPoint, long sizeBytes) {}

    /** One record: a range written (or punched, {@code zero}) and where its data starts in the journal. */
    record Entry(boolean zero, long offset, long length, int crc32c, long at) {}

    /** A whole journal, checked. */
    record Contents(Header header, List<Entry> entries, long dataBytes) {}

    /** The journal fails a check (short, a flipped byte, not a journal): nothing in it may be applied. */
    static final class Corrupt extends Exception {
        Corrupt(String message) {
            super(message);
        }
    }

    private RoundJournal() {}

    /** Appends records to a new journal file; {@link #finish} writes the trailer and syncs it. One writer. */
    static final class Writer implements AutoCloseable {
        private final FileChannel channel;
        private final Header header;
        private final CRC32C index = new CRC32C();
        private final List<Entry> entries = new ArrayList<>();
        private final ByteBuffer fixed = ByteBuffer.allocate(RECORD_BYTES);
        private long position;
        private long dataBytes;

        Writer(Path file, Header header) throws IOException {
            this.header = header;
            this.channel = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW);
            try {
                ByteBuffer head = encode(header);
                index.update(head.duplicate());
                writeFully(head);
            } catch (IOException | RuntimeException e) {
                channel.close();
                throw e;
            }
        }

        /** A range of data at {@code offset}; consumes {@code data}. */
        void data(ByteBuffer data, long offset) throws IOException {
            CRC32C crc = new CRC32C();
            crc.update(data.duplicate());
            int length = data.remaining();
            record(DATA, offset, length, (int) crc.getValue());
            entries.add(new Entry(false, offset, length, (int) crc.getValue(), position));
            writeFully(data);
            dataBytes += length;
        }

        /** A range that reads as zeros. */
        void zero(long offset, long length) throws IOException {
            record(ZERO, offset, length, 0);
            entries.add(new Entry(true, offset, length, 0, position));
        }

        private void record(byte kind, long offset, long length, int crc) throws IOException {
            fixed.clear();
            fixed.put(kind).putLong(offset).putLong(length).putInt(crc).flip();
            index.update(fixed.duplicate());
            writeFully(fixed);
        }

        /** The trailer, then fsync: the journal is whole on disk (not yet complete: that is its rename). */
        Contents finish() throws IOException {
            ByteBuffer end = ByteBuffer.allocate(TRAILER_BYTES);
            end.put(END).putLong(entries.size()).putLong(dataBytes).putInt((int) index.getValue()).flip();
            writeFully(end);
            channel.force(true);
            return new Contents(header, List.copyOf(entries), dataBytes);
        }

        /** The journal's size once a record of {@code dataBytes} more and the trailer are written. */
        long sizeWith(long dataBytes) {
            return position + RECORD_BYTES + dataBytes + TRAILER_BYTES;
        }

        /** Records written so far. */
        int records() {
            return entries.size();
        }

        private void writeFully(ByteBuffer buffer) throws IOException {
            while (buffer.hasRemaining()) position += channel.write(buffer, position);
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }

    /**
     * Reads and checks the whole journal (every CRC32C, the trailer's counts, nothing after it). Plain file reads, not a
     * FileChannel: an interrupted thread (a round given up) must not see a good journal as unreadable.
     */
    static Contents read(Path file) throws IOException, Corrupt {
        try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
            long size = in.length();
            CRC32C index = new CRC32C();
            ByteBuffer head = readExactly(in, 0, (int) Math.min(size, 8 + 3 * (2 + 4 * 128) + 8), false);
            Header header = decode(head, file);
            int headerBytes = head.position();
            index.update(head.flip().limit(headerBytes));
            long at = headerBytes;
            List<Entry> entries = new ArrayList<>();
            long dataBytes = 0;
            byte[] chunk = new byte[1 << 20];
            while (true) {
                ByteBuffer fixed = readExactly(in, at, RECORD_BYTES, true);
                if (fixed == null) throw new Corrupt(file + " ends after " + entries.size() + " records, without its trailer");
                byte kind = fixed.get(0);
                if (kind == END) {                                // the trailer is a record's size
                    long ranges = fixed.getLong(1);
                    long data = fixed.getLong(9);
                    int crc = fixed.getInt(17);
                    if (ranges != entries.size() || data != dataBytes) {
                        throw new Corrupt(file + ": the trailer counts " + ranges + " ranges and " + data + " bytes, the records "
                                + entries.size() + " and " + dataBytes);
                    }
                    if (crc != (int) index.getValue()) throw new Corrupt(file + ": the CRC32C of its header and records does not match");
                    if (at + RECORD_BYTES != size) throw new Corrupt(file + ": " + (size - at - RECORD_BYTES) + " bytes follow its trailer");
                    return new Contents(header, List.copyOf(entries), dataBytes);
                }
                if (kind != DATA && kind != ZERO) throw new Corrupt(file + ": record " + entries.size() + " has kind " + kind);
                long offset = fixed.getLong(1);
                long length = fixed.getLong(9);
                int crc = fixed.getInt(17);
                if (offset < 0 || length <= 0 || offset + length > header.sizeBytes() || offset + length < 0) {
                    throw new Corrupt(file + ": record " + entries.size() + " lies outside the image: " + offset + "+" + length);
                }
                index.update(fixed.rewind());
                at += RECORD_BYTES;
                if (kind == ZERO) {
                    entries.add(new Entry(true, offset, length, 0, at));
                    continue;
                }
                if (at + length > size) throw new Corrupt(file + ": record " + entries.size() + "'s data is cut short");
                CRC32C data = new CRC32C();
                in.seek(at);
                for (long done = 0; done < length; ) {
                    int n = (int) Math.min(chunk.length, length - done);
                    in.readFully(chunk, 0, n);
                    data.update(chunk, 0, n);
                    done += n;
                }
                if ((int) data.getValue() != crc) throw new Corrupt(file + ": record " + entries.size() + " at " + offset + " fails its CRC32C");
                entries.add(new Entry(false, offset, length, crc, at));
                at += length;
                dataBytes += length;
            }
        }
    }

    /** Told before each record is applied (its index), and once more with the count when all are. */
    interface Progress {
        void applying(int record);
    }

    /**
     * Applies every record in order to {@code image} (the data read back from the journal: pwrite; a zero range:
     * punched), then syncs the image. Idempotent. Plain file reads and writes, not FileChannels, which an interrupt
     * closes mid-apply. The caller holds the volume's lock.
     */
    static void apply(Path journal, Contents contents, Path image, Progress progress) throws IOException {
        byte[] chunk = new byte[1 << 20];
        try (RandomAccessFile from = new RandomAccessFile(journal.toFile(), "r");
             RandomAccessFile to = new RandomAccessFile(image.toFile(), "rw")) {
            int i = 0;
            for (Entry e : contents.entries()) {
                progress.applying(i++);
                if (e.zero()) {
                    Fallocate.punchHole(image, e.offset(), e.length());
                    continue;
                }
                for (long done = 0; done < e.length(); ) {
                    int n = (int) Math.min(chunk.length, e.length() - done);
                    from.seek(e.at() + done);
                    from.readFully(chunk, 0, n);
                    to.seek(e.offset() + done);
                    to.write(chunk, 0, n);
                    done += n;
                }
            }
            progress.applying(i);
            to.getFD().sync();
        }
    }

    private static ByteBuffer encode(Header h) {
        byte[][] strings = {h.volumeId().getBytes(StandardCharsets.UTF_8), h.basePoint().getBytes(StandardCharsets.UTF_8),
                h.targetPoint().getBytes(StandardCharsets.UTF_8)};
        int bytes = MAGIC.length + 8;
        for (byte[] s : strings) bytes += 2 + s.length;
        ByteBuffer b = ByteBuffer.allocate(bytes).put(MAGIC);
        for (byte[] s : strings) {
            if (s.length > 0xFFFF) throw new IllegalArgumentException("an id of " + s.length + " bytes");
            b.putShort((short) s.length).put(s);
        }
        return b.putLong(h.sizeBytes()).flip();
    }

    /** The header at the start of {@code b}; leaves its position after the header. */
    private static Header decode(ByteBuffer b, Path file) throws Corrupt {
        try {
            byte[] magic = new byte[MAGIC.length];
            b.get(magic);
            if (!java.util.Arrays.equals(magic, MAGIC)) throw new Corrupt(file + " is not a round journal");
            String[] strings = new String[3];
            for (int i = 0; i < 3; i++) {
                byte[] s = new byte[Short.toUnsignedInt(b.getShort())];
                b.get(s);
                strings[i] = new String(s, StandardCharsets.UTF_8);
            }
            long size = b.getLong();
            if (size < 0) throw new Corrupt(file + ": a negative size");
            return new Header(strings[0], strings[1], strings[2], size);
        } catch (java.nio.BufferUnderflowException e) {
            throw new Corrupt(file + ": its header is cut short");
        }
    }

    /** {@code length} bytes at {@code at}; null (when {@code orNull}) or a short buffer at the end of the file. */
    private static ByteBuffer readExactly(RandomAccessFile in, long at, int length, boolean orNull) throws IOException {
        byte[] b = new byte[length];
        in.seek(at);
        int got = 0;
        while (got < length) {
            int n = in.read(b, got, length - got);
            if (n < 0) {
                if (orNull) return null;
                break;
            }
            got += n;
        }
        return ByteBuffer.wrap(b, 0, got).slice();
    }
}
