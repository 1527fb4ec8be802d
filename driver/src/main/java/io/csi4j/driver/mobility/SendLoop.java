package io.csi4j.driver.mobility;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.SourceImage;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

/**
 * The one loop that puts a copy's ranges on the wire, for every sender: the pieces {@link ChunkReader} reads, each
 * turned by the sender's {@link Plan} into runs (what differs between senders is only that decision), each run framed
 * as a checksummed {@link SourcePart.Range}, within the bandwidth limit, counted in the copy's progress, stopped when
 * the receiver goes away. The caller sends the header before and the trailer after ({@link Sent} counts it).
 */
final class SendLoop {
    private SendLoop() {}

    /**
     * What to do with one piece read: runs inside it, ascending. {@link HashDelta.Action#DATA} sends the piece's bytes
     * there, {@link HashDelta.Action#ZERO} a range of zeros (a hole to punch), {@link HashDelta.Action#SKIP} sends
     * nothing but counts the bytes as moved (against the bandwidth and in the progress: a full copy's zeros, read and
     * then left out because the receiver's image is zeros there already). Bytes in no run are neither sent nor counted.
     */
    interface Plan {
        List<HashDelta.Run> runs(ChunkReader.Chunk piece);
    }

    /** What the loop sent: ranges and their data and zero bytes; {@code complete} false when the receiver went away. */
    record Sent(long ranges, long dataBytes, long zeroBytes, long sendingNanos, boolean complete) {}

    /** Sends every piece {@code reader} reads as {@code plan} decides, data in ranges of one stream part at most. */
    static Sent send(ChunkReader reader, Plan plan, SourceSender.Sink sink, Bandwidth bandwidth, Copies.Copy copy, String id) {
        return send(null, reader, plan, sink, bandwidth, copy, id, SourceSender.CHUNK);
    }

    /**
     * Sends every piece {@code reader} reads as {@code plan} decides; ABORTED when interrupted. Data goes in ranges of
     * at most {@code maxPart} bytes, each with its CRC32C: from the piece's bytes, or, for a piece read as its digest
     * only (no bytes held: a chunk bigger than a part), read again from {@code image} one part at a time, so no message
     * and no buffer is ever bigger than a part. Zeros go as one range of any length (no data travels).
     */
    static Sent send(SourceImage image, ChunkReader reader, Plan plan, SourceSender.Sink sink, Bandwidth bandwidth, Copies.Copy copy,
                     String id, int maxPart) {
        if (maxPart <= 0 || maxPart > SourceSender.CHUNK) throw new IllegalArgumentException("parts of " + maxPart + " bytes");
        long ranges = 0, dataBytes = 0, zeroBytes = 0, sendingNanos = 0;
        byte[] reread = null;
        try {
            for (ChunkReader.Chunk piece = reader.next(); piece != null; piece = reader.next()) {
                try {
                    for (HashDelta.Run run : plan.runs(piece)) {
                        if (run.action() != HashDelta.Action.DATA) {
                            bandwidth.take(run.length());
                            copy.moved(run.length());
                            if (run.action() == HashDelta.Action.SKIP) continue;
                            long sending = System.nanoTime();
                            var zeros = new SourcePart.Range(run.offset(), run.length(), null, true, SourceSender.crcOfZeros(run.length()));
                            if (!sink.send(zeros)) return new Sent(ranges, dataBytes, zeroBytes, sendingNanos, false);
                            sendingNanos += System.nanoTime() - sending;
                            ranges++;
                            zeroBytes += run.length();
                            continue;
                        }
                        if (piece.data() == null && reread == null) reread = new byte[maxPart];
                        for (int done = 0; done < run.length(); ) {
                            int n = Math.min(maxPart, run.length() - done);
                            bandwidth.take(n);
                            copy.moved(n);
                            // no copy: the sink is done with the buffer when send returns, before it is reused or released
                            SourcePart.Range range = piece.data() != null ? slice(piece, run.offset() + done, n)
                                    : reread(image, run.offset() + done, n, reread);
                            long sending = System.nanoTime();
                            if (!sink.send(range)) return new Sent(ranges, dataBytes, zeroBytes, sendingNanos, false);
                            sendingNanos += System.nanoTime() - sending;
                            ranges++;
                            dataBytes += n;
                            done += n;
                        }
                    }
                } finally {
                    reader.release(piece);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw DomainException.aborted("interrupted while sending " + id);
        }
        return new Sent(ranges, dataBytes, zeroBytes, sendingNanos, true);
    }

    /** {@code length} bytes of a piece's at {@code offset}, with their CRC32C (the piece's own when they are the piece). */
    private static SourcePart.Range slice(ChunkReader.Chunk piece, long offset, int length) {
        int at = (int) (offset - piece.offset());
        if (at < 0 || at + length > piece.length()) throw new IllegalArgumentException(offset + "+" + length + " is not inside " + piece);
        boolean whole = at == 0 && length == piece.length();
        return new SourcePart.Range(offset, length, ByteBuffer.wrap(piece.data(), at, length), false,
                whole ? piece.crc() : SourceSender.crc(ByteBuffer.wrap(piece.data(), at, length)));
    }

    /** {@code length} bytes read again from the image at {@code offset} into {@code buffer} (past its end: zeros). */
    private static SourcePart.Range reread(SourceImage image, long offset, int length, byte[] buffer) {
        int read = Math.max(0, image.read(ByteBuffer.wrap(buffer, 0, length), offset));
        if (read < length) Arrays.fill(buffer, read, length, (byte) 0);
        return new SourcePart.Range(offset, length, ByteBuffer.wrap(buffer, 0, length), false, SourceSender.crc(buffer, length));
    }
}
