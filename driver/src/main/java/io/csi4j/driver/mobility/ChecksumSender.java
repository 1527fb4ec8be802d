package io.csi4j.driver.mobility;

import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.engine.SourceImage;
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
        send(image, id, sourceVolumeId, hashes, peer, sink, bandwidth, copy, cancelled, SourceSender.CHUNK);
    }

    /** As above, the data sent in ranges of at most {@code maxPart} bytes (smaller than a stream part in tests). */
    static void send(SourceImage image, String id, String sourceVolumeId, ChunkHashes hashes, String peer, SourceSender.Sink sink,
                     Bandwidth bandwidth, Copies.Copy copy, BooleanSupplier cancelled, int maxPart) {
        // two walks of the extent map, as the sender does for ranges it does not hold: the total first (the header's)
        long toRead = 0;
        try (RangeCursor count = HashDelta.candidates(image.allocated(cancelled), image.sizeBytes(), hashes)) {
            for (RangeCursor.Range r = count.next(); r != null; r = count.next()) toRead += r.length();
        }
        copy.total(toRead);
        if (!sink.send(new SourcePart.Header(image.sizeBytes(), sourceVolumeId, hashes.baseSnapshotId(), toRead))) return;
        long started = System.nanoTime();
        SendLoop.Sent sent;
        try (RangeCursor candidates = HashDelta.candidates(image.allocated(cancelled), image.sizeBytes(), hashes);
             // a piece is one chunk when chunks are bigger than a part: read as its digest, sent again in parts if it differs
             ChunkReader reader = new ChunkReader(image, candidates, Math.max(SourceSender.CHUNK, hashes.chunkBytes()))) {
            sent = SendLoop.send(image, reader, piece -> HashDelta.plan(hashes, piece), sink, bandwidth, copy, id, maxPart);
        }
        if (!sent.complete()) return;
        sink.send(new SourcePart.Trailer(sent.ranges(), sent.dataBytes()));
        long read = toRead;
        LOG.info(() -> "sent " + id + " to " + peer + " by checksums against " + hashes.baseSnapshotId() + " (" + hashes.indexes().length
                + " digests of " + hashes.chunkBytes() + "-byte chunks): " + sent.dataBytes() + " data bytes and " + sent.zeroBytes()
                + " of zeros in " + sent.ranges() + " ranges, of " + read + " bytes compared, in " + (System.nanoTime() - started) / 1_000_000 + " ms");
    }
}
