package io.csi4j.driver.mobility;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.engine.SourceImage;
import java.nio.ByteBuffer;
import java.util.function.BooleanSupplier;
import java.util.logging.Logger;

/**
 * The sending side of a resync by checksums ({@link HashDelta}'s rules): the same header, checksummed ranges and
 * trailer as any copy, the header naming the receiver's old point as the base (the receiver builds from its replica of
 * it, as for a delta), the ranges only the chunks whose bytes differ. Reads every chunk the new point or the receiver's
 * list touches; the bandwidth limit and the counted bytes are what goes on the wire.
 */
final class ChecksumSender {
    private static final Logger LOG = Logger.getLogger(ChecksumSender.class.getName());

    private ChecksumSender() {}

    static void send(SourceImage image, String id, String sourceVolumeId, ChunkHashes hashes, String peer, SourceSender.Sink sink,
                     Bandwidth bandwidth, Copies.Copy copy, BooleanSupplier cancelled) {
        // two walks of the extent map, as the sender does for ranges it does not hold: the total first (the header's)
        long toRead = 0;
        try (RangeCursor count = HashDelta.candidates(image.allocated(cancelled), image.sizeBytes(), hashes)) {
            for (RangeCursor.Range r = count.next(); r != null; r = count.next()) toRead += r.length();
        }
        copy.total(toRead);
        if (!sink.send(new SourcePart.Header(image.sizeBytes(), sourceVolumeId, hashes.baseSnapshotId(), toRead))) return;
        long ranges = 0;
        long dataBytes = 0;
        long zeroBytes = 0;
        long started = System.nanoTime();
        try (RangeCursor candidates = HashDelta.candidates(image.allocated(cancelled), image.sizeBytes(), hashes);
             ChunkReader reader = new ChunkReader(image, candidates)) {
            for (ChunkReader.Chunk chunk = reader.next(); chunk != null; chunk = reader.next()) {
                try {
                    for (HashDelta.Run run : HashDelta.plan(hashes, chunk.offset(), chunk.data(), chunk.length())) {
                        int at = (int) (run.offset() - chunk.offset());
                        bandwidth.take(run.length());
                        copy.moved(run.length());
                        SourcePart.Range range = run.action() == HashDelta.Action.ZERO
                                ? new SourcePart.Range(run.offset(), run.length(), null, true, SourceSender.crcOfZeros(run.length()))
                                : new SourcePart.Range(run.offset(), run.length(), ByteBuffer.wrap(chunk.data(), at, run.length()),
                                        false, SourceSender.crc(ByteBuffer.wrap(chunk.data(), at, run.length())));
                        if (run.action() == HashDelta.Action.ZERO) zeroBytes += run.length();
                        else dataBytes += run.length();
                        if (!sink.send(range)) return;
                        ranges++;
                    }
                } finally {
                    reader.release(chunk);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw DomainException.aborted("interrupted while sending " + id);
        }
        sink.send(new SourcePart.Trailer(ranges, dataBytes));
        long read = toRead, data = dataBytes, zeros = zeroBytes, sent = ranges;
        LOG.info(() -> "sent " + id + " to " + peer + " by checksums against " + hashes.baseSnapshotId() + " (" + hashes.indexes().length
                + " digests of " + hashes.chunkBytes() + "-byte chunks): " + data + " data bytes and " + zeros + " of zeros in " + sent
                + " ranges, of " + read + " bytes compared, in " + (System.nanoTime() - started) / 1_000_000 + " ms");
    }
}
