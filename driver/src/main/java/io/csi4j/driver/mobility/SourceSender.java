package io.csi4j.driver.mobility;

import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.engine.SnapshotRanges;
import io.csi4j.driver.engine.SourceImage;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.State;
import io.csi4j.driver.volume.Volumes;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.logging.Logger;
import java.util.zip.CRC32C;

/**
 * The sending side of a copy between nodes: one snapshot or volume of this node, as a stream of checksummed ranges.
 * A full copy sends the allocated ranges and skips what reads as zeros inside them (the receiver's image starts
 * sparse); a copy against a base (a snapshot of the same volume the receiver holds a replica of) sends the ranges
 * that changed, zeros as holes to punch.
 */
public final class SourceSender {
    /** Data per message: big enough that the per-message cost vanishes, far under gRPC's 4 MiB message limit. */
    public static final int CHUNK = 1 << 20;
    private static final Logger LOG = Logger.getLogger(SourceSender.class.getName());

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

    /**
     * Where the parts go: blocks while the receiver cannot take more; false once it went away. A range's data is the
     * sender's buffer, reused once {@code send} returns: the sink is done with it by then.
     */
    public interface Sink {
        boolean send(SourcePart part);
    }

    /** Streams the source into {@code sink}; NOT_FOUND for a source this node does not hold (ready). */
    public void send(SourceQuery query, String peer, Sink sink, BooleanSupplier cancelled) {
        DataMover mover = engine.capability(DataMover.class).orElseThrow(() ->
                DomainException.precondition("the " + engine.name() + " engine cannot send volumes to another node"));
        Artifact.Kind kind;
        String id;
        String sourceVolumeId;
        switch (query.source()) {
            case ContentSource.FromSnapshot s -> {
                kind = Artifact.Kind.SNAPSHOT;
                id = s.snapshotId();
                sourceVolumeId = readySnapshot(id).sourceVolumeId();
            }
            case ContentSource.FromVolume v -> {
                kind = Artifact.Kind.VOLUME;
                id = v.volumeId();
                sourceVolumeId = volumes.reads().readyVolume(id, "source volume").id();
            }
            case ContentSource.None none -> throw DomainException.invalid("snapshot_id or volume_id is REQUIRED");
        }
        Optional<DeltaBase.Base> base = kind == Artifact.Kind.SNAPSHOT ? base(mover, query, id, sourceVolumeId) : Optional.empty();
        try (SourceImage image = mover.openSource(kind, id);
             Copies.Copy copy = copies.start(id, false, peer, id)) {
            // no common base, and the receiver holds an old point of the volume: only the chunks that differ from it
            if (base.isEmpty() && kind == Artifact.Kind.SNAPSHOT && query.hashes().isPresent()) {
                ChecksumSender.send(image, id, sourceVolumeId, query.hashes().get(), peer, sink, bandwidth, copy, cancelled);
                return;
            }
            // one walk of the extent maps where the ranges fit in memory (a round's delta does), two otherwise
            Optional<HeldRanges> held = HeldRanges.hold(ranges(image, base, sourceVolumeId, id, cancelled), HeldRanges.LIMIT);
            long toSend = held.isPresent() ? held.get().totalBytes() : 0;
            if (held.isEmpty()) {
                try (RangeCursor scan = ranges(image, base, sourceVolumeId, id, cancelled)) {
                    for (RangeCursor.Range r = scan.next(); r != null; r = scan.next()) toSend += r.length();
                }
            }
            boolean headerSent = false;
            try {
                copy.total(toSend);
                headerSent = sink.send(new SourcePart.Header(image.sizeBytes(), sourceVolumeId, base.map(DeltaBase.Base::id).orElse(""), toSend));
            } finally {
                if (!headerSent) held.ifPresent(HeldRanges::close);   // its files stay open only for the loop below
            }
            if (!headerSent) return;
            long started = System.nanoTime();
            SendLoop.Sent sent;
            // each piece read whole: its data, or its zeros (left out of a full copy: the receiver's image is zeros there)
            SendLoop.Plan plan = piece -> List.of(new HashDelta.Run(piece.offset(), piece.length(), !piece.zero() ? HashDelta.Action.DATA
                    : base.isEmpty() ? HashDelta.Action.SKIP : HashDelta.Action.ZERO));
            try (RangeCursor cursor = held.isPresent() ? held.get() : ranges(image, base, sourceVolumeId, id, cancelled); ChunkReader reader = new ChunkReader(image, cursor)) {
                sent = SendLoop.send(reader, plan, sink, bandwidth, copy, id);
            }
            if (!sent.complete()) return;
            sink.send(new SourcePart.Trailer(sent.ranges(), sent.dataBytes()));
            LOG.info("sent " + id + " to " + peer + ": " + sent.ranges() + " ranges in " + (System.nanoTime() - started) / 1_000_000
                    + " ms (" + sent.sendingNanos() / 1_000_000 + " ms of it handing chunks to gRPC, while " + ChunkReader.READERS
                    + " threads read ahead)");
        }
    }

    /** The base of the copy, by {@link DeltaBase#choose}: this node's snapshots of the volume, then its replicas of it. */
    private Optional<DeltaBase.Base> base(DataMover mover, SourceQuery query, String target, String sourceVolumeId) {
        if (engine.capability(SnapshotRanges.class).isEmpty()) return Optional.empty();
        var snapshots = query.baseSnapshotIds().stream()
                .map(b -> catalog.snapshots().byId(b)).flatMap(Optional::stream)
                .filter(s -> s.state() == State.READY && s.sourceVolumeId().equals(sourceVolumeId))
                .map(s -> new DeltaBase.Snapshot(s.id(), s.createdAt())).toList();
        var replicas = mover.replicas().stream().filter(r -> r.sourceVolumeId().equals(sourceVolumeId)).map(Replica::snapshotId).toList();
        return DeltaBase.choose(target, query.baseSnapshotIds(), snapshots, replicas);
    }

    private RangeCursor ranges(SourceImage image, Optional<DeltaBase.Base> base, String sourceVolumeId, String target,
                               BooleanSupplier cancelled) {
        if (base.isEmpty()) return image.allocated(cancelled);
        SnapshotRanges maps = engine.capability(SnapshotRanges.class).orElseThrow();
        return switch (base.get()) {
            case DeltaBase.OfSnapshot s -> maps.changedRanges(s.id(), target, 0, cancelled);
            case DeltaBase.OfReplica r -> maps.changedRangesFromReplica(new Replica(sourceVolumeId, r.id()), target, 0, cancelled);
        };
    }

    private SnapshotRecord readySnapshot(String id) {
        return catalog.snapshots().byId(id).filter(s -> s.state() == State.READY)
                .orElseThrow(() -> DomainException.notFound("source snapshot " + id + " does not exist on this node"));
    }

    static boolean isZero(byte[] bytes, int length) {
        return Arrays.mismatch(bytes, 0, length, ZEROS, 0, length) < 0;
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

    /** The CRC32C of {@code length} zero bytes, any length (a range of zeros may span chunks bigger than a part). */
    static int crcOfZeros(long length) {
        if (length <= CHUNK) return crc(ZEROS, (int) length);
        CRC32C crc = new CRC32C();
        for (long left = length; left > 0; left -= CHUNK) crc.update(ZEROS, 0, (int) Math.min(CHUNK, left));
        return (int) crc.getValue();
    }
}
