package io.csi4j.driver.mobility;

import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.ImageImport;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.volume.NewVolume;
import io.csi4j.driver.volume.Volumes;
import io.csi4j.proto.cluster.DataRange;
import io.csi4j.proto.cluster.PeerAgent;
import io.csi4j.proto.cluster.ReadSourceRequest;
import io.csi4j.proto.cluster.SourceChunk;
import io.csi4j.proto.cluster.SourceHeader;
import io.csi4j.sdk.CsiException;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
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
    private final Peers peers;
    private final Bandwidth bandwidth;
    private final Copies copies;
    private final ConcurrentHashMap<String, CompletableFuture<Result>> running = new ConcurrentHashMap<>();
    private final String nodeId;

    public VolumeImports(Volumes volumes, PoolStorage engine, Peers peers, Bandwidth bandwidth, Copies copies, String nodeId) {
        this.nodeId = nodeId;
        this.volumes = volumes;
        this.engine = engine;
        this.peers = peers;
        this.bandwidth = bandwidth;
        this.copies = copies;
    }

    /** Makes the volume from {@code source}'s copy of the request's content source, or joins the copy under way. */
    public Result importVolume(NewVolume request, PeerAgent source) {
        if (request.source() instanceof ContentSource.None) throw CsiException.invalidArgument("volume_content_source is REQUIRED");
        if (engine.capability(DataMover.class).isEmpty()) {
            throw CsiException.failedPrecondition("the content source lives on node '" + source.getNodeId() + "', and the "
                    + engine.name() + " engine of node '" + nodeId + "' cannot copy volumes between nodes (the image engine can)");
        }
        Optional<VolumeRecord> existing = running.containsKey(request.name()) ? Optional.empty() : volumes.existing(request);
        if (existing.isPresent()) return new Result(existing.get(), 0, "");
        CompletableFuture<Result> copy = running.computeIfAbsent(request.name(), name -> {
            var future = new CompletableFuture<Result>();
            // not the call's context: a cancelled CreateVolume must not cancel the copy its retry will join
            Thread.ofVirtual().name("csi4j-copy-" + name).start(() -> Context.ROOT.run(() -> {
                try {
                    future.complete(copy(request, source));
                } catch (Throwable t) {
                    future.completeExceptionally(t);
                } finally {
                    running.remove(name, future);
                }
            }));
            return future;
        });
        try {
            return copy.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) throw r;
            throw new CompletionException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw CsiException.aborted("interrupted while waiting for the copy of '" + request.name() + "'");
        }
    }

    private Result copy(NewVolume request, PeerAgent source) {
        var read = ReadSourceRequest.newBuilder().setReaderNodeId(nodeId);
        String sourceId = switch (request.source()) {
            case ContentSource.FromSnapshot s -> { read.setSnapshotId(s.snapshotId()); yield s.snapshotId(); }
            case ContentSource.FromVolume v -> { read.setVolumeId(v.volumeId()); yield v.volumeId(); }
            case ContentSource.None none -> throw new IllegalStateException("checked by the caller");
        };
        List<Replica> replicas = request.source() instanceof ContentSource.FromSnapshot
                ? engine.capability(DataMover.class).map(DataMover::replicas).orElse(List.of()) : List.of();
        replicas.forEach(r -> read.addBaseSnapshotIds(r.snapshotId()));
        try (Context.CancellableContext stream = Context.ROOT.withCancellation();
             Copies.Copy progress = copies.start(request.name(), true, source.getNodeId(), sourceId)) {
            return stream.call(() -> {
                Iterator<SourceChunk> chunks = peer(source, () -> peers.agent(source).readSource(read.build()));
                SourceHeader header = peer(source, () -> next(chunks, source)).getHeader();
                progress.total(header.getBytesToSend());
                Replica base = header.getBaseSnapshotId().isEmpty() ? null : replicas.stream()
                        .filter(r -> r.snapshotId().equals(header.getBaseSnapshotId())).findFirst()
                        .orElseThrow(() -> protocolError("node '" + source.getNodeId() + "' sent a delta against "
                                + header.getBaseSnapshotId() + ", which this node holds no replica of"));
                Replica keepAs = request.source() instanceof ContentSource.FromSnapshot
                        ? new Replica(header.getSourceVolumeId(), sourceId) : null;
                long[] received = {0};
                long started = System.nanoTime();
                VolumeRecord v = volumes.createCopy(request, new Volumes.Incoming() {
                    @Override public long sourceBytes() { return header.getSizeBytes(); }
                    @Override public Replica base() { return base; }
                    @Override public Replica keepAs() { return keepAs; }
                    @Override public void fill(ImageImport target) {
                        received[0] = peer(source, () -> receive(chunks, target, header, source, progress));
                    }
                });
                long millis = (System.nanoTime() - started) / 1_000_000;
                LOG.info(() -> "copied " + sourceId + " from node '" + source.getNodeId() + "' into volume " + v.id() + ": "
                        + received[0] + " bytes" + (base == null ? "" : " changed since " + base.snapshotId()) + " in " + millis
                        + " ms (waiting for data " + progress.waitedNanos / 1_000_000 + " ms, writing " + progress.writingNanos / 1_000_000
                        + " ms, the rest checking, syncing and committing)");
                return new Result(v, received[0], base == null ? "" : base.snapshotId());
            });
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Writes every range into {@code target}, checked; returns the data bytes received. */
    private long receive(Iterator<SourceChunk> chunks, ImageImport target, SourceHeader header, PeerAgent source,
                         Copies.Copy progress) {
        long ranges = 0;
        long dataBytes = 0;
        while (true) {
            long waited = System.nanoTime();
            SourceChunk chunk = next(chunks, source);
            progress.waitedNanos += System.nanoTime() - waited;
            switch (chunk.getPartCase()) {
                case RANGE -> {
                    DataRange r = chunk.getRange();
                    if (r.getOffset() < 0 || r.getLength() <= 0 || r.getOffset() + r.getLength() > Math.max(header.getSizeBytes(), 0)) {
                        throw protocolError("node '" + source.getNodeId() + "' sent a range outside the source: "
                                + r.getOffset() + "+" + r.getLength());
                    }
                    bandwidth.take(r.getLength());
                    if (r.getZero()) {
                        target.zero(r.getOffset(), r.getLength());
                    } else {
                        if (r.getData().size() != r.getLength()) throw mismatch(source, r, "length " + r.getData().size());
                        if (SourceSender.crc(r.getData().asReadOnlyByteBuffer()) != r.getCrc32C()) throw mismatch(source, r, "CRC32C");
                        long writing = System.nanoTime();
                        target.write(r.getData().asReadOnlyByteBuffer(), r.getOffset());
                        progress.writingNanos += System.nanoTime() - writing;
                        dataBytes += r.getLength();
                    }
                    ranges++;
                    progress.moved(r.getLength());
                }
                case TRAILER -> {
                    if (chunk.getTrailer().getRanges() != ranges || chunk.getTrailer().getDataBytes() != dataBytes) {
                        throw CsiException.aborted("the copy from node '" + source.getNodeId() + "' is incomplete: "
                                + ranges + " ranges and " + dataBytes + " bytes arrived, " + chunk.getTrailer().getRanges()
                                + " and " + chunk.getTrailer().getDataBytes() + " were sent; retry");
                    }
                    return dataBytes;
                }
                default -> throw protocolError("node '" + source.getNodeId() + "' sent " + chunk.getPartCase() + " mid-stream");
            }
        }
    }

    /** The peer broke the protocol (a bug on one side): INTERNAL, the copy rolled back. */
    private static CsiException protocolError(String message) {
        return new CsiException(Status.Code.INTERNAL, message);
    }

    private static CsiException mismatch(PeerAgent source, DataRange r, String what) {
        return CsiException.aborted("the copy from node '" + source.getNodeId() + "' failed its check at offset "
                + r.getOffset() + " (" + what + " does not match); nothing was kept, retry");
    }

    private static SourceChunk next(Iterator<SourceChunk> chunks, PeerAgent source) {
        if (!chunks.hasNext()) {
            throw CsiException.aborted("the copy from node '" + source.getNodeId() + "' ended early; retry");
        }
        return chunks.next();
    }

    /** A peer's failure as the CO should see it: the source node named, its silence UNAVAILABLE. */
    private static <T> T peer(PeerAgent source, java.util.function.Supplier<T> body) {
        try {
            return body.get();
        } catch (StatusRuntimeException e) {
            Status.Code code = e.getStatus().getCode();
            String description = e.getStatus().getDescription();
            if (code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED || code == Status.Code.CANCELLED) {
                throw CsiException.unavailable("node '" + source.getNodeId() + "' (" + source.getAddress()
                        + "), which holds the content source, did not answer: " + code + (description == null ? "" : ": " + description));
            }
            throw new CsiException(code, "node '" + source.getNodeId() + "': " + (description == null ? code.name() : description));
        }
    }

    /** Copies being made here now, for status. */
    public Copies copies() { return copies; }
}
