package io.csi4j.driver.mobility;

import com.google.protobuf.UnsafeByteOperations;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.catalog.SnapshotRecord;
import io.csi4j.driver.catalog.State;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.engine.SourceImage;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.volume.Volumes;
import io.csi4j.proto.cluster.DataRange;
import io.csi4j.proto.cluster.ReadSourceRequest;
import io.csi4j.proto.cluster.SourceChunk;
import io.csi4j.proto.cluster.SourceHeader;
import io.csi4j.proto.cluster.SourceTrailer;
import io.csi4j.sdk.CsiException;
import java.nio.ByteBuffer;
import java.util.Comparator;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.zip.CRC32C;

/**
 * The sending side of a copy between nodes: one snapshot or volume of this node, as a stream of checksummed ranges.
 * A full copy sends the allocated ranges and skips what reads as zeros inside them (the receiver's image starts
 * sparse); a copy against a base (a snapshot of the same volume the receiver holds a replica of) sends the ranges
 * that changed, zeros as holes to punch.
 */
public final class SourceSender {
    /** Data per message: big enough that the per-message cost vanishes, far under gRPC's 4 MiB message limit. */
    static final int CHUNK = 1 << 20;

    private final Catalog catalog;
    private final PoolStorage engine;
    private final Volumes volumes;
    private final Bandwidth bandwidth;
    private final Copies copies;

    public SourceSender(Catalog catalog, PoolStorage engine, Volumes volumes, Bandwidth bandwidth, Copies copies) {
        this.catalog = catalog;
        this.engine = engine;
        this.volumes = volumes;
        this.bandwidth = bandwidth;
        this.copies = copies;
    }

    /** Where the chunks go: blocks while the receiver cannot take more; false once it went away. */
    public interface Sink {
        boolean send(SourceChunk chunk);
    }

    /** Streams the source into {@code sink}; NOT_FOUND for a source this node does not hold (ready). */
    public void send(ReadSourceRequest req, String peer, Sink sink, BooleanSupplier cancelled) {
        if (!engine.movesData()) throw CsiException.failedPrecondition("the " + engine.name() + " engine cannot send volumes to another node");
        Artifact.Kind kind;
        String id;
        String sourceVolumeId;
        switch (req.getSourceCase()) {
            case SNAPSHOT_ID -> {
                kind = Artifact.Kind.SNAPSHOT;
                id = req.getSnapshotId();
                sourceVolumeId = readySnapshot(id).sourceVolumeId();
            }
            case VOLUME_ID -> {
                kind = Artifact.Kind.VOLUME;
                id = req.getVolumeId();
                sourceVolumeId = volumes.readyVolume(id, "source volume").id();
            }
            default -> throw CsiException.invalidArgument("snapshot_id or volume_id is REQUIRED");
        }
        Optional<String> base = kind == Artifact.Kind.SNAPSHOT ? base(req, id, sourceVolumeId) : Optional.empty();
        try (SourceImage image = engine.openSource(kind, id);
             Copies.Copy copy = copies.start(id, false, peer, id)) {
            long toSend = 0;
            try (RangeCursor scan = ranges(image, base, id, cancelled)) {
                for (RangeCursor.Range r = scan.next(); r != null; r = scan.next()) toSend += r.length();
            }
            copy.total(toSend);
            if (!sink.send(SourceChunk.newBuilder().setHeader(SourceHeader.newBuilder().setSizeBytes(image.sizeBytes())
                    .setSourceVolumeId(sourceVolumeId).setBaseSnapshotId(base.orElse("")).setBytesToSend(toSend)).build())) return;
            long ranges = 0;
            long dataBytes = 0;
            ByteBuffer buffer = ByteBuffer.allocateDirect(CHUNK);
            byte[] bytes = new byte[CHUNK];
            try (RangeCursor cursor = ranges(image, base, id, cancelled)) {
                for (RangeCursor.Range r = cursor.next(); r != null; r = cursor.next()) {
                    for (long at = r.offset(); at < r.end(); ) {
                        int length = (int) Math.min(CHUNK, r.end() - at);
                        buffer.clear().limit(length);
                        int read = image.read(buffer, at);
                        if (read < length) {                        // past the image's end (a base larger than it): zeros
                            buffer.limit(length);
                            while (buffer.position() < length) buffer.put((byte) 0);
                        }
                        buffer.flip();
                        buffer.get(bytes, 0, length);
                        bandwidth.take(length);
                        DataRange.Builder range = DataRange.newBuilder().setOffset(at).setLength(length);
                        if (isZero(bytes, length)) {
                            if (base.isEmpty()) {
                                copy.moved(length);
                                at += length;
                                continue;                           // the receiver's image is zeros there already
                            }
                            range.setZero(true).setCrc32C(crcOfZeros(length));
                        } else {
                            // no copy: gRPC serializes the message inside onNext, before this buffer is reused
                            range.setData(UnsafeByteOperations.unsafeWrap(bytes, 0, length)).setCrc32C(crc(bytes, length));
                            dataBytes += length;
                        }
                        if (!sink.send(SourceChunk.newBuilder().setRange(range).build())) return;
                        ranges++;
                        copy.moved(length);
                        at += length;
                    }
                }
            }
            sink.send(SourceChunk.newBuilder().setTrailer(SourceTrailer.newBuilder().setRanges(ranges).setDataBytes(dataBytes)).build());
        }
    }

    /**
     * The receiver's replica of the target itself (then nothing needs sending), else the newest of its replicas that is
     * a ready snapshot of the same volume here, if any.
     */
    private Optional<String> base(ReadSourceRequest req, String target, String sourceVolumeId) {
        if (!engine.mapsSnapshotBlocks()) return Optional.empty();
        if (req.getBaseSnapshotIdsList().contains(target)) return Optional.of(target);
        return req.getBaseSnapshotIdsList().stream()
                .map(b -> catalog.snapshots().byId(b)).flatMap(Optional::stream)
                .filter(s -> s.state() == State.READY && s.sourceVolumeId().equals(sourceVolumeId))
                .max(Comparator.comparing(SnapshotRecord::createdAt)).map(SnapshotRecord::id);
    }

    private RangeCursor ranges(SourceImage image, Optional<String> base, String target, BooleanSupplier cancelled) {
        return base.isPresent() ? engine.changedRanges(base.get(), target, 0, cancelled) : image.allocated(cancelled);
    }

    private SnapshotRecord readySnapshot(String id) {
        return catalog.snapshots().byId(id).filter(s -> s.state() == State.READY)
                .orElseThrow(() -> CsiException.notFound("source snapshot " + id + " does not exist on this node"));
    }

    static boolean isZero(byte[] bytes, int length) {
        return java.util.Arrays.mismatch(bytes, 0, length, ZEROS, 0, length) < 0;
    }

    private static final byte[] ZEROS = new byte[CHUNK];

    static int crc(ByteBuffer bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes);
        return (int) crc.getValue();
    }

    static int crc(byte[] bytes, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, length);
        return (int) crc.getValue();
    }

    static int crcOfZeros(int length) {
        return crc(ZEROS, length);
    }
}
