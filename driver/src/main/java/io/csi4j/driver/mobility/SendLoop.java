package io.csi4j.driver.mobility;

import io.csi4j.driver.domain.DomainException;
import java.nio.ByteBuffer;
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

    /** Sends every piece {@code reader} reads as {@code plan} decides; ABORTED when interrupted. */
    static Sent send(ChunkReader reader, Plan plan, SourceSender.Sink sink, Bandwidth bandwidth, Copies.Copy copy, String id) {
        long ranges = 0, dataBytes = 0, zeroBytes = 0, sendingNanos = 0;
        try {
            for (ChunkReader.Chunk piece = reader.next(); piece != null; piece = reader.next()) {
                try {
                    for (HashDelta.Run run : plan.runs(piece)) {
                        bandwidth.take(run.length());
                        copy.moved(run.length());
                        if (run.action() == HashDelta.Action.SKIP) continue;
                        SourcePart.Range range = range(piece, run);
                        long sending = System.nanoTime();
                        // no copy: the sink is done with the buffer when send returns, before the piece is released
                        if (!sink.send(range)) return new Sent(ranges, dataBytes, zeroBytes, sendingNanos, false);
                        sendingNanos += System.nanoTime() - sending;
                        ranges++;
                        if (range.zero()) zeroBytes += run.length();
                        else dataBytes += run.length();
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

    /** One run of a piece as a range: its bytes and their CRC32C (the piece's own when the run is the piece), or zeros. */
    private static SourcePart.Range range(ChunkReader.Chunk piece, HashDelta.Run run) {
        if (run.action() == HashDelta.Action.ZERO) {
            return new SourcePart.Range(run.offset(), run.length(), null, true, SourceSender.crcOfZeros(run.length()));
        }
        int at = (int) (run.offset() - piece.offset());
        if (at < 0 || at + run.length() > piece.length()) throw new IllegalArgumentException(run + " is not inside " + piece);
        boolean whole = at == 0 && run.length() == piece.length();
        ByteBuffer data = ByteBuffer.wrap(piece.data(), at, run.length());
        return new SourcePart.Range(run.offset(), run.length(), data, false,
                whole ? piece.crc() : SourceSender.crc(ByteBuffer.wrap(piece.data(), at, run.length())));
    }
}
