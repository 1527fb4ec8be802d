package io.csi4j.driver.mobility;

import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.engine.SourceImage;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Reads a source's ranges in chunks ahead of the sender, on {@link #READERS} threads of its own, so the disk is read
 * while earlier chunks are on the wire (and several reads are in flight: a sparse image's ranges are scattered). Chunks
 * come out in no particular order (each carries its offset); at most {@link #BUFFERS} are held at once. Pieces bigger
 * than a buffer (a resync by checksums with chunks above {@link SourceSender#CHUNK}) are read through a buffer and
 * come out as their SHA-256 and whether they are zeros, without their bytes: the sender reads again what it sends.
 */
final class ChunkReader implements AutoCloseable {
    static final int READERS = 2;
    static final int BUFFERS = 6;

    /**
     * One chunk: its bytes (a buffer of the pool, returned by {@link #release}), whether it reads as zeros, its CRC32C;
     * for a piece bigger than a buffer, no bytes (null) and no CRC32C but its SHA-256 ({@code digest}, else null).
     */
    record Chunk(long offset, int length, byte[] data, boolean zero, int crc, byte[] digest) {
        Chunk(long offset, int length, byte[] data, boolean zero, int crc) {
            this(offset, length, data, zero, crc, null);
        }
    }

    private static final Chunk END = new Chunk(-1, 0, null, false, 0);

    private final SourceImage image;
    private final RangeCursor cursor;
    private final BlockingQueue<byte[]> free = new ArrayBlockingQueue<>(BUFFERS);
    private final BlockingQueue<Chunk> ready = new ArrayBlockingQueue<>(BUFFERS + READERS);
    private volatile boolean stopped;
    private volatile RuntimeException failure;
    private RangeCursor.Range range;
    private long at;
    private int ended;
    private final Thread[] readers = new Thread[READERS];
    private final int pieceBytes;

    ChunkReader(SourceImage image, RangeCursor cursor) {
        this(image, cursor, SourceSender.CHUNK);
    }

    /** Pieces of at most {@code pieceBytes}; above {@link SourceSender#CHUNK}, digested and not held. */
    ChunkReader(SourceImage image, RangeCursor cursor, int pieceBytes) {
        if (pieceBytes <= 0) throw new IllegalArgumentException("pieces of " + pieceBytes + " bytes");
        this.image = image;
        this.cursor = cursor;
        this.pieceBytes = pieceBytes;
        for (int i = 0; i < BUFFERS; i++) free.add(new byte[SourceSender.CHUNK]);
        for (int i = 0; i < READERS; i++) readers[i] = Thread.ofVirtual().name("csi4j-read-" + i).start(this::read);
    }

    /** The next chunk read, or null when every range was read; rethrows a reader's failure. */
    Chunk next() throws InterruptedException {
        while (true) {
            Chunk chunk = ready.take();
            if (chunk != END) return chunk;
            if (failure != null) throw failure;
            if (++ended == READERS) return null;
        }
    }

    /** Gives a chunk's buffer back for the readers to fill again. */
    void release(Chunk chunk) {
        if (chunk.data() != null) free.offer(chunk.data());
    }

    private void read() {
        try {
            while (!stopped) {
                byte[] buffer = free.poll(100, TimeUnit.MILLISECONDS);
                if (buffer == null) continue;
                long[] next = nextPiece();
                if (next == null) {
                    free.offer(buffer);
                    break;
                }
                int length = (int) next[1];
                if (length > buffer.length) {
                    ready.put(digested(next[0], length, buffer));
                    continue;
                }
                int read = image.read(ByteBuffer.wrap(buffer, 0, length), next[0]);
                if (read < length) Arrays.fill(buffer, read, length, (byte) 0);   // past the image's end: zeros
                boolean zero = SourceSender.isZero(buffer, length);
                ready.put(new Chunk(next[0], length, buffer, zero, zero ? SourceSender.crcOfZeros(length) : SourceSender.crc(buffer, length)));
            }
        } catch (RuntimeException e) {
            failure = e;
            stopped = true;
        } catch (InterruptedException e) {
            stopped = true;
        } finally {
            try {
                ready.put(END);
            } catch (InterruptedException ignored) {
                // closing: nobody waits for it
            }
        }
    }

    /** A piece bigger than a buffer, read through {@code buffer} (given back): its SHA-256 when it is not zeros. */
    private Chunk digested(long offset, int length, byte[] buffer) {
        try {
            byte[] digest = new byte[ChunkHashes.DIGEST];
            boolean data = ChunkHashes.digest(image, offset, length, ByteBuffer.wrap(buffer), ChunkHashes.sha256(), digest, 0);
            return new Chunk(offset, length, null, !data, 0, data ? digest : null);
        } finally {
            free.offer(buffer);
        }
    }

    /** The next piece of at most {@code pieceBytes}, {offset, length}, or null at the end. */
    private synchronized long[] nextPiece() {
        while (range == null || at >= range.end()) {
            range = cursor.next();
            if (range == null) return null;
            at = range.offset();
        }
        long length = Math.min(pieceBytes, range.end() - at);
        long[] piece = {at, length};
        at += length;
        return piece;
    }

    @Override
    public void close() {
        stopped = true;
        for (Thread reader : readers) reader.interrupt();
        for (Thread reader : readers) {
            try {
                reader.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
