package io.csi4j.driver.cluster;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.mobility.ChunkHashes;
import io.csi4j.driver.mobility.SourcePart;
import io.csi4j.driver.mobility.SourceQuery;
import io.csi4j.driver.mobility.SourceSender;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.proto.cluster.DataRange;
import io.csi4j.proto.cluster.DataRanges;
import io.csi4j.proto.cluster.ReadSourceRequest;
import io.csi4j.proto.cluster.SourceChunk;
import io.csi4j.proto.cluster.SourceHeader;
import io.csi4j.proto.cluster.SourceTrailer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** NodeAgent.ReadSource's messages to and from the domain's {@link SourceQuery} and {@link SourcePart}s. */
final class CopyWire {
    private CopyWire() {}

    /**
     * The data bytes this reader takes in one message of several ranges (ReadSourceRequest.range_batch_bytes), and the
     * most a sender puts in one whatever a reader asks: what one range carries at most, far under the 4 MiB a reader's
     * channel takes ({@link Peers}).
     */
    static final int BATCH_BYTES = SourceSender.CHUNK;

    static SourceQuery query(ReadSourceRequest req) {
        ContentSource source = switch (req.getSourceCase()) {
            case SNAPSHOT_ID -> new ContentSource.FromSnapshot(req.getSnapshotId());
            case VOLUME_ID -> new ContentSource.FromVolume(req.getVolumeId());
            case SOURCE_NOT_SET -> ContentSource.NONE;
        };
        Optional<ChunkHashes> hashes = req.getHashBaseSnapshotId().isEmpty() ? Optional.empty()
                : Optional.of(new ChunkHashes(req.getHashBaseSnapshotId(), Math.toIntExact(Math.min(req.getHashChunkBytes(), Integer.MAX_VALUE)),
                        req.getHashChunkIndexesList().stream().mapToLong(Long::longValue).toArray(), req.getHashDigests().toByteArray()));
        return new SourceQuery(source, req.getBaseSnapshotIdsList(), req.getReaderNodeId(), hashes);
    }

    static ReadSourceRequest request(SourceQuery query) {
        var read = ReadSourceRequest.newBuilder().setReaderNodeId(query.readerNodeId()).addAllBaseSnapshotIds(query.baseSnapshotIds())
                .setRangeBatchBytes(BATCH_BYTES);
        switch (query.source()) {
            case ContentSource.FromSnapshot s -> read.setSnapshotId(s.snapshotId());
            case ContentSource.FromVolume v -> read.setVolumeId(v.volumeId());
            case ContentSource.None none -> { }
        }
        query.hashes().ifPresent(h -> {
            read.setHashBaseSnapshotId(h.baseSnapshotId()).setHashChunkBytes(h.chunkBytes()).setHashDigests(ByteString.copyFrom(h.digests()));
            for (long i : h.indexes()) read.addHashChunkIndexes(i);
        });
        return read.build();
    }

    /** The message of a part; a range's data is wrapped, not copied (gRPC serializes it inside onNext). */
    static SourceChunk chunk(SourcePart part) {
        return switch (part) {
            case SourcePart.Header h -> SourceChunk.newBuilder().setHeader(SourceHeader.newBuilder().setSizeBytes(h.sizeBytes())
                    .setSourceVolumeId(h.sourceVolumeId()).setBaseSnapshotId(h.baseSnapshotId()).setBytesToSend(h.bytesToSend())).build();
            case SourcePart.Range r -> SourceChunk.newBuilder().setRange(range(r, false)).build();
            case SourcePart.Trailer t -> SourceChunk.newBuilder().setTrailer(SourceTrailer.newBuilder().setRanges(t.ranges())
                    .setDataBytes(t.dataBytes())).build();
        };
    }

    /** A range's message: its data wrapped (sent before the buffer is reused) or {@code copied} (held past that). */
    static DataRange range(SourcePart.Range r, boolean copied) {
        DataRange.Builder range = DataRange.newBuilder().setOffset(r.offset()).setLength(r.length()).setCrc32C(r.crc32c());
        if (r.zero()) return range.setZero(true).build();
        return range.setData(copied ? ByteString.copyFrom(r.data().duplicate()) : UnsafeByteOperations.unsafeWrap(r.data())).build();
    }

    /** The message of several ranges, in order (a reader that asked for them). */
    static SourceChunk chunk(List<DataRange> ranges) {
        return SourceChunk.newBuilder().setRanges(DataRanges.newBuilder().addAllRanges(ranges)).build();
    }

    /**
     * The parts a message of {@code nodeId} carries, in order: one, or each range of a message of several (the trailer
     * counts them one by one). A message that carries none breaks the protocol.
     */
    static List<SourcePart> parts(SourceChunk chunk, String nodeId) {
        return switch (chunk.getPartCase()) {
            case HEADER -> {
                SourceHeader h = chunk.getHeader();
                yield List.of(new SourcePart.Header(h.getSizeBytes(), h.getSourceVolumeId(), h.getBaseSnapshotId(), h.getBytesToSend()));
            }
            case RANGE -> List.of(part(chunk.getRange()));
            case RANGES -> {
                if (chunk.getRanges().getRangesCount() == 0) throw DomainException.failed("node '" + nodeId + "' sent an empty RANGES");
                List<SourcePart> parts = new ArrayList<>(chunk.getRanges().getRangesCount());
                for (DataRange r : chunk.getRanges().getRangesList()) parts.add(part(r));
                yield parts;
            }
            case TRAILER -> List.of(new SourcePart.Trailer(chunk.getTrailer().getRanges(), chunk.getTrailer().getDataBytes()));
            case PART_NOT_SET -> throw DomainException.failed("node '" + nodeId + "' sent " + chunk.getPartCase() + " mid-stream");
        };
    }

    private static SourcePart.Range part(DataRange r) {
        return new SourcePart.Range(r.getOffset(), r.getLength(), r.getData().asReadOnlyByteBuffer(), r.getZero(), r.getCrc32C());
    }
}
