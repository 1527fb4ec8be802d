package io.csi4j.driver.mobility;

import com.google.protobuf.UnsafeByteOperations;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.engine.SnapshotRanges;
import io.csi4j.driver.engine.SourceImage;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.State;
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
    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger(SourceSender.class.getName());

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
        DataMover mover = engine.capability(DataMover.class).orElseThrow(() ->
                CsiException.failedPrecondition("the " + engine.name() + " engine cannot send volumes to another node"));
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
        try (SourceImage image = mover.openSource(kind, id);
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
            long sendingNanos = 0;
            long started = System.nanoTime();
            try (RangeCursor cursor = ranges(image, base, id, cancelled); ChunkReader reader = new ChunkReader(image, cursor)) {
                for (ChunkReader.Chunk chunk = reader.next(); chunk != null; chunk = reader.next()) {
                    try {
                        bandwidth.take(chunk.length());
                        copy.moved(chunk.length());
                        if (chunk.zero() && base.isEmpty()) continue;   // the receiver's image is zeros there already
                        DataRange.Builder range = DataRange.newBuilder().setOffset(chunk.offset()).setLength(chunk.length())
                                .setCrc32C(chunk.crc());
                        if (chunk.zero()) {
                            range.setZero(true);
                        } else {
                            // no copy: gRPC serializes the message inside onNext, before the buffer is released
                            range.setData(UnsafeByteOperations.unsafeWrap(chunk.data(), 0, chunk.length()));
                            dataBytes += chunk.length();
                        }
                        long sending = System.nanoTime();
                        if (!sink.send(SourceChunk.newBuilder().setRange(range).build())) return;
                        sendingNanos += System.nanoTime() - sending;
                        ranges++;
                    } finally {
                        reader.release(chunk);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw CsiException.aborted("interrupted while sending " + id);
            }
            sink.send(SourceChunk.newBuilder().setTrailer(SourceTrailer.newBuilder().setRanges(ranges).setDataBytes(dataBytes)).build());
            LOG.info("sent " + id + " to " + peer + ": " + ranges + " ranges in " + (System.nanoTime() - started) / 1_000_000
                    + " ms (" + sendingNanos / 1_000_000 + " ms of it handing chunks to gRPC, while " + ChunkReader.READERS
                    + " threads read ahead)");
        }
    }

    /**
     * The receiver's replica of the target itself (then nothing needs sending), else the newest of its replicas that is
     * a ready snapshot of the same volume here, if any.
     */
    private Optional<String> base(ReadSourceRequest req, String target, String sourceVolumeId) {
        if (engine.capability(SnapshotRanges.class).isEmpty()) return Optional.empty();
        if (req.getBaseSnapshotIdsList().contains(target)) return Optional.of(target);
        return req.getBaseSnapshotIdsList().stream()
                .map(b -> catalog.snapshots().byId(b)).flatMap(Optional::stream)
                .filter(s -> s.state() == State.READY && s.sourceVolumeId().equals(sourceVolumeId))
                .max(Comparator.comparing(SnapshotRecord::createdAt)).map(SnapshotRecord::id);
    }

    private RangeCursor ranges(SourceImage image, Optional<String> base, String target, BooleanSupplier cancelled) {
        return base.isPresent() ? engine.capability(SnapshotRanges.class).orElseThrow().changedRanges(base.get(), target, 0, cancelled)
                : image.allocated(cancelled);
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
