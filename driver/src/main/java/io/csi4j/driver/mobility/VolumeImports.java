package io.csi4j.driver.mobility;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.ImageImport;
import io.csi4j.driver.engine.ImportBase;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.engine.StillImage;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.volume.NewVolume;
import io.csi4j.driver.volume.VolumeCreation;
import io.csi4j.driver.volume.Volumes;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.logging.Logger;

/**
 * The receiving side of a copy between nodes: CreateVolume here of a volume whose source lives on another node. The
 * copy runs on its own thread, not the call's: a CO that gives up and retries the same name joins the running copy,
 * and only one copy per name ever runs. Each range is checked against its CRC32C before it is written; the stream
 * must end with a trailer that counts what was sent, else the copy is incomplete and rolled back.
 */
public final class VolumeImports {
    private static final Logger LOG = Logger.getLogger(VolumeImports.class.getName());

    /** What a CreateVolume by copy answers: the volume, what this attempt received, and the base it started from. */
    public record Result(VolumeRecord volume, long bytesReceived, String baseSnapshotId) {}

    private final Volumes volumes;
    private final PoolStorage engine;
    private final Bandwidth bandwidth;
    private final Copies copies;
    private final ConcurrentHashMap<String, CompletableFuture<Result>> running = new ConcurrentHashMap<>();
    private final String nodeId;

    public VolumeImports(Volumes volumes, PoolStorage engine, Bandwidth bandwidth, Copies copies, String nodeId) {
        this.nodeId = nodeId;
        this.volumes = volumes;
        this.engine = engine;
        this.bandwidth = bandwidth;
        this.copies = copies;
    }

    /** Makes the volume from {@code source}'s copy of the request's content source, or joins the copy under way. */
    public Result importVolume(NewVolume request, SourceNode source) {
        if (request.source() instanceof ContentSource.None) throw DomainException.invalid("volume_content_source is REQUIRED");
        if (engine.capability(DataMover.class).isEmpty()) {
            throw DomainException.precondition("the content source lives on node '" + source.nodeId() + "', and the "
                    + engine.name() + " engine of node '" + nodeId + "' cannot copy volumes between nodes (the image engine can)");
        }
        Optional<VolumeRecord> existing = running.containsKey(request.name()) ? Optional.empty() : volumes.creation().existing(request);
        if (existing.isPresent()) return new Result(existing.get(), 0, "");
        CompletableFuture<Result> copy = running.computeIfAbsent(request.name(), name -> {
            var future = new CompletableFuture<Result>();
            // a thread of its own, not the call's: a cancelled CreateVolume must not cancel the copy its retry will join
            Thread.ofVirtual().name("csi4j-copy-" + name).start(() -> {
                try {
                    future.complete(copy(request, source));
                } catch (Throwable t) {
                    future.completeExceptionally(t);
                } finally {
                    running.remove(name, future);
                }
            });
            return future;
        });
        try {
            return copy.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) throw r;
            throw new CompletionException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw DomainException.aborted("interrupted while waiting for the copy of '" + request.name() + "'");
        }
    }

    private Result copy(NewVolume request, SourceNode source) {
        String sourceId = switch (request.source()) {
            case ContentSource.FromSnapshot s -> s.snapshotId();
            case ContentSource.FromVolume v -> v.volumeId();
            case ContentSource.None none -> throw new IllegalStateException("checked by the caller");
        };
        List<Replica> replicas = request.source() instanceof ContentSource.FromSnapshot
                ? engine.capability(DataMover.class).map(DataMover::replicas).orElse(List.of()) : List.of();
        List<String> bases = new ArrayList<>();
        replicas.forEach(r -> bases.add(r.snapshotId()));
        try (SourceNode.Transfer transfer = source.read(new SourceQuery(request.source(), bases, nodeId));
             Copies.Copy progress = copies.start(request.name(), true, source.nodeId(), sourceId)) {
            SourcePart first = next(transfer, source);
            if (!(first instanceof SourcePart.Header header)) {
                throw protocolError("node '" + source.nodeId() + "' sent " + name(first) + " before its header");
            }
            progress.total(header.bytesToSend());
            Replica base = header.baseSnapshotId().isEmpty() ? null : replicas.stream()
                    .filter(r -> r.snapshotId().equals(header.baseSnapshotId())).findFirst()
                    .orElseThrow(() -> protocolError("node '" + source.nodeId() + "' sent a delta against "
                            + header.baseSnapshotId() + ", which this node holds no replica of"));
            Replica keepAs = request.source() instanceof ContentSource.FromSnapshot
                    ? new Replica(header.sourceVolumeId(), sourceId) : null;
            long[] received = {0};
            long started = System.nanoTime();
            VolumeRecord v = volumes.creation().createCopy(request, new VolumeCreation.Incoming() {
                @Override public long sourceBytes() { return header.sizeBytes(); }
                @Override public Replica base() { return base; }
                @Override public Replica keepAs() { return keepAs; }
                @Override public void fill(ImageImport target) {
                    received[0] = receive(transfer, target, header, "volume " + request.name(), source, progress);
                }
            });
            long millis = (System.nanoTime() - started) / 1_000_000;
            LOG.info(() -> "copied " + sourceId + " from node '" + source.nodeId() + "' into volume " + v.id() + ": "
                    + received[0] + " bytes" + (base == null ? "" : " changed since " + base.snapshotId()) + " in " + millis
                    + " ms (waiting for data " + progress.waitedNanos / 1_000_000 + " ms, writing " + progress.writingNanos / 1_000_000
                    + " ms, the rest checking, syncing and committing)");
            return new Result(v, received[0], base == null ? "" : base.snapshotId());
        }
    }

    /**
     * What one replication pull moved, and the point it started from (empty: a full copy); {@code byChecksums} when that
     * point was the receiver's old one the sender never held (a resync by checksums); a resync against the volume's own
     * image has {@code byChecksums} with an empty base (no point was its base); {@code inPlace} when the delta went
     * into the image under a journal (docs/inplace-rounds.md section 1) instead of a new image built beside.
     */
    public record Pulled(long bytesReceived, String baseSnapshotId, boolean byChecksums, boolean inPlace) {}

    /**
     * What a resync by checksums against the volume's own image names as its base (the request's and the header's base
     * snapshot id): no snapshot has this id, and it is never kept as a point.
     */
    public static final String IMAGE_BASE = "volume-image";

    /**
     * One replication round's pull on a secondary (docs/replication.md): the point {@code pointId} of {@code volumeId}
     * from the primary, only what changed since the point this node holds a replica of, over the same checked,
     * bandwidth-limited stream as any copy; the volume's copy here is replaced by it whole ({@link io.csi4j.driver.volume.VolumeChanges#replaceImage}).
     * When the primary holds none of this node's points (a failover, a third copy after a handoff) and this node holds a
     * replica of an old point, the stream is dropped after its header and asked again with that replica's chunk digests
     * (a resync by checksums: the chunks that differ). With {@code imageIsBase} (a fenced old primary that follows: it
     * holds no point, but its image is almost the primary's) and no replica held, the digests are those of a still copy
     * of the volume's own image, and the new image is built from that copy: the image is only a base, the result the
     * primary's point. A full copy only when neither is there. The caller holds the volume's replication lock.
     */
    public Pulled pullPoint(String volumeId, String pointId, SourceNode source, boolean imageIsBase) {
        return pullPoint(volumeId, pointId, source, imageIsBase, "");
    }

    /**
     * As above, where this copy holds {@code heldPoint} (empty: none): a delta against that very point (not a full
     * copy, not a resync by checksums) may be applied to the image in place ({@link io.csi4j.driver.engine.InPlaceApply},
     * docs/inplace-rounds.md section 1; the engine decides the rest of the conditions).
     */
    public Pulled pullPoint(String volumeId, String pointId, SourceNode source, boolean imageIsBase, String heldPoint) {
        DataMover mover = engine.capability(DataMover.class).orElseThrow(() -> DomainException.precondition(
                "the " + engine.name() + " engine of node '" + nodeId + "' cannot hold replicas (the image engine can)"));
        List<Replica> held = mover.replicas().stream().filter(r -> r.sourceVolumeId().equals(volumeId)).toList();
        if (held.isEmpty() && imageIsBase) {
            Optional<StillImage> still = mover.stillImage(volumeId);
            if (still.isPresent()) {
                try (StillImage image = still.get()) {
                    long started = System.nanoTime();
                    ChunkHashes hashes = ChunkHashes.of(IMAGE_BASE, image, () -> Thread.currentThread().isInterrupted());
                    LOG.info(() -> "replica of " + volumeId + " holds no point: resync of " + pointId + (hashes == null
                            ? " whole: its image has more chunks than a list holds"
                            : " by checksums against its own image (" + hashes + ", hashed in " + (System.nanoTime() - started) / 1_000_000 + " ms)"));
                    // a blank image (nothing listed) gains nothing from its digests: the plain full copy
                    if (hashes != null && hashes.indexes().length > 0) return pull(volumeId, pointId, source, held, hashes, image, true, "");
                }
            }
        }
        Pulled pulled = pull(volumeId, pointId, source, held, null, null, held.isEmpty(), heldPoint);
        if (pulled != null) return pulled;
        long started = System.nanoTime();
        // the newest point held (kept last here): the fewest chunks differ; the header must name it (pull checks)
        Replica old = NewestReplica.of(held.stream().map(r -> new NewestReplica.Kept(r, mover.keptAt(r))).toList()).orElseThrow();
        ChunkHashes hashes = hashes(mover, old);
        LOG.info(() -> "node '" + source.nodeId() + "' holds none of this node's points of " + volumeId + ": resync of " + pointId
                + (hashes == null ? " whole: its replica " + old.snapshotId() + " has more chunks than a list holds"
                : " by checksums against " + old.snapshotId() + " (" + hashes + ", hashed in " + (System.nanoTime() - started) / 1_000_000 + " ms)"));
        return pull(volumeId, pointId, source, held, hashes, null, true, "");
    }

    /**
     * One pull; null, nothing changed, when it would be a full copy and {@code fullAllowed} is false (the caller asks
     * again with the digests of its old point). {@code still}: the still image {@code hashes} are of, the base when
     * the header names {@link #IMAGE_BASE}. {@code heldPoint}: the point the copy holds, when a delta against it may be
     * applied in place (empty: never).
     */
    private Pulled pull(String volumeId, String pointId, SourceNode source, List<Replica> held, ChunkHashes hashes,
                        StillImage still, boolean fullAllowed, String heldPoint) {
        try (SourceNode.Transfer transfer = source.read(new SourceQuery(new ContentSource.FromSnapshot(pointId),
                held.stream().map(Replica::snapshotId).toList(), nodeId, Optional.ofNullable(hashes)));
             Copies.Copy progress = copies.start("replica " + volumeId, true, source.nodeId(), pointId)) {
            SourcePart first = next(transfer, source);
            if (!(first instanceof SourcePart.Header header)) {
                throw protocolError("node '" + source.nodeId() + "' sent " + name(first) + " before its header");
            }
            if (!header.sourceVolumeId().equals(volumeId)) {
                throw protocolError("node '" + source.nodeId() + "' sent a point of " + header.sourceVolumeId() + ", not of " + volumeId);
            }
            if (header.baseSnapshotId().isEmpty() && !fullAllowed) return null;   // dropped: the sender stops at its next part
            progress.total(header.bytesToSend());
            ImportBase base = header.baseSnapshotId().isEmpty() ? null
                    : still != null && header.baseSnapshotId().equals(IMAGE_BASE) ? still
                    : held.stream().filter(r -> r.snapshotId().equals(header.baseSnapshotId())).findFirst()
                    .orElseThrow(() -> protocolError("node '" + source.nodeId() + "' sent a delta against "
                            + header.baseSnapshotId() + ", which this node holds no replica of"));
            long[] received = {0};
            boolean ofHeld = deltaOfHeld(hashes != null, base, heldPoint);
            boolean inPlace = volumes.changes().replaceImage(volumeId, header.sizeBytes(), base, new Replica(volumeId, pointId),
                    ofHeld ? OptionalLong.of(header.bytesToSend()) : OptionalLong.empty(),
                    target -> received[0] = receive(transfer, target, header, "replica of " + volumeId, source, progress));
            // against the image: no point was the base (empty, as for a full copy), but it went by checksums
            String baseId = base instanceof Replica r ? r.snapshotId() : "";
            return new Pulled(received[0], baseId, hashes != null && header.baseSnapshotId().equals(hashes.baseSnapshotId()), inPlace);
        }
    }

    /**
     * Whether a round's delta may go into the image in place (docs/inplace-rounds.md 1.1, condition 2): its base is the
     * replica of the point this copy holds, and it was asked without digests (not a resync by checksums, whose base is
     * an old replica or the image's still copy). A full copy has no base.
     */
    static boolean deltaOfHeld(boolean byChecksums, ImportBase base, String heldPoint) {
        return !byChecksums && base instanceof Replica r && !heldPoint.isEmpty() && r.snapshotId().equals(heldPoint);
    }

    /** The chunk digests of the replica here (null: too many chunks to list). */
    private static ChunkHashes hashes(DataMover mover, Replica replica) {
        try (var image = mover.openReplica(replica)) {
            return ChunkHashes.of(replica.snapshotId(), image, () -> Thread.currentThread().isInterrupted());
        }
    }

    /** Writes every range into {@code target}, checked ({@link RangeWriter}); returns the data bytes received. */
    private long receive(SourceNode.Transfer transfer, ImageImport target, SourcePart.Header header, String what, SourceNode source,
                         Copies.Copy progress) {
        RangeWriter writer = new RangeWriter(target, header, what, source.nodeId(), bandwidth, progress);
        while (true) {
            long waited = System.nanoTime();
            SourcePart part = next(transfer, source);
            progress.waitedNanos += System.nanoTime() - waited;
            switch (part) {
                case SourcePart.Range r -> writer.write(r);
                case SourcePart.Trailer t -> {
                    if (t.ranges() != writer.ranges() || t.dataBytes() != writer.dataBytes()) {
                        throw DomainException.aborted("the copy from node '" + source.nodeId() + "' is incomplete: "
                                + writer.ranges() + " ranges and " + writer.dataBytes() + " bytes arrived, " + t.ranges()
                                + " and " + t.dataBytes() + " were sent; retry");
                    }
                    return writer.dataBytes();
                }
                case SourcePart.Header h -> throw protocolError("node '" + source.nodeId() + "' sent " + name(h) + " mid-stream");
            }
        }
    }

    /** The peer broke the protocol (a bug on one side): FAILED, the copy rolled back. */
    private static DomainException protocolError(String message) {
        return DomainException.failed(message);
    }

    private static SourcePart next(SourceNode.Transfer transfer, SourceNode source) {
        SourcePart part = transfer.next();
        if (part == null) throw DomainException.aborted("the copy from node '" + source.nodeId() + "' ended early; retry");
        return part;
    }

    /** A part as the protocol names it, for messages. */
    private static String name(SourcePart part) {
        return switch (part) {
            case SourcePart.Header h -> "HEADER";
            case SourcePart.Range r -> "RANGE";
            case SourcePart.Trailer t -> "TRAILER";
        };
    }

    /** Copies being made here now, for status. */
    public Copies copies() { return copies; }
}
