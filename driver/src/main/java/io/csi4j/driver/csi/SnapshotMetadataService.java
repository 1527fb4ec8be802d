package io.csi4j.driver.csi;

import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.snapshot.SnapshotBlocks;
import io.csi4j.driver.storage.StorageException;
import io.csi4j.proto.csi.BlockMetadata;
import io.csi4j.proto.csi.BlockMetadataType;
import io.csi4j.proto.csi.GetMetadataAllocatedRequest;
import io.csi4j.proto.csi.GetMetadataAllocatedResponse;
import io.csi4j.proto.csi.GetMetadataDeltaRequest;
import io.csi4j.proto.csi.GetMetadataDeltaResponse;
import io.csi4j.proto.csi.SnapshotMetadataGrpc;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.function.BiFunction;

/**
 * csi.v1.SnapshotMetadata. Ranges are VARIABLE_LENGTH: they come from extents and data runs, whose natural
 * unit is "as long as it goes", so 1 GiB written in one piece is one tuple instead of 262,144 fixed blocks,
 * and a reader sees exactly what the filesystem knows. Messages are produced only while the transport can take
 * them (gRPC's onReady flow control): a slow reader holds one message in memory, never the map.
 */
public final class SnapshotMetadataService extends SnapshotMetadataGrpc.SnapshotMetadataImplBase {
    private static final BlockMetadataType TYPE = BlockMetadataType.VARIABLE_LENGTH;

    private final SnapshotBlocks blocks;

    public SnapshotMetadataService(SnapshotBlocks blocks) {
        this.blocks = blocks;
    }

    @Override
    public void getMetadataAllocated(GetMetadataAllocatedRequest req, StreamObserver<GetMetadataAllocatedResponse> out) {
        int perMessage = SnapshotBlocks.rangesPerMessage(req.getMaxResults());
        var call = (ServerCallStreamObserver<GetMetadataAllocatedResponse>) out;
        RangeCursor cursor = blocks.allocated(req.getSnapshotId(), req.getStartingOffset(), call::isCancelled);
        new Pump<>(call, cursor, perMessage, (capacity, ranges) -> GetMetadataAllocatedResponse.newBuilder()
                .setBlockMetadataType(TYPE).setVolumeCapacityBytes(capacity).addAllBlockMetadata(ranges).build()).start();
    }

    @Override
    public void getMetadataDelta(GetMetadataDeltaRequest req, StreamObserver<GetMetadataDeltaResponse> out) {
        int perMessage = SnapshotBlocks.rangesPerMessage(req.getMaxResults());
        var call = (ServerCallStreamObserver<GetMetadataDeltaResponse>) out;
        RangeCursor cursor = blocks.delta(req.getBaseSnapshotId(), req.getTargetSnapshotId(), req.getStartingOffset(),
                call::isCancelled);
        new Pump<>(call, cursor, perMessage, (capacity, ranges) -> GetMetadataDeltaResponse.newBuilder()
                .setBlockMetadataType(TYPE).setVolumeCapacityBytes(capacity).addAllBlockMetadata(ranges).build()).start();
    }

    /** Moves ranges from a cursor into messages whenever the call is ready for more; closes the cursor at the end. */
    private static final class Pump<T> implements Runnable {
        private final ServerCallStreamObserver<T> out;
        private final RangeCursor cursor;
        private final int perMessage;
        private final BiFunction<Long, List<BlockMetadata>, T> message;
        private boolean sentAny;
        private boolean closed;

        Pump(ServerCallStreamObserver<T> out, RangeCursor cursor, int perMessage, BiFunction<Long, List<BlockMetadata>, T> message) {
            this.out = out;
            this.cursor = cursor;
            this.perMessage = perMessage;
            this.message = message;
        }

        void start() {
            out.setOnCancelHandler(this::close);
            out.setOnReadyHandler(this);   // gRPC runs it once the handler returns, and each time the call drains
        }

        @Override
        public void run() {
            if (closed) return;
            try {
                while (out.isReady()) {
                    List<BlockMetadata> ranges = new ArrayList<>(Math.min(perMessage, 64));
                    RangeCursor.Range range = null;
                    while (ranges.size() < perMessage && (range = cursor.next()) != null) {
                        ranges.add(BlockMetadata.newBuilder().setByteOffset(range.offset()).setSizeBytes(range.length()).build());
                    }
                    boolean finished = range == null;
                    // an empty map still says the capacity, in one message with no ranges
                    if (!ranges.isEmpty() || (finished && !sentAny)) {
                        out.onNext(message.apply(cursor.capacityBytes(), ranges));
                        sentAny = true;
                    }
                    if (finished) {
                        close();
                        out.onCompleted();
                        return;
                    }
                }
            } catch (CancellationException e) {
                close();   // the caller went away (or its deadline passed): nobody to answer
            } catch (StorageException e) {
                close();
                throw StorageStatus.toCsi(e);
            } catch (RuntimeException | Error e) {
                close();
                throw e;
            }
        }

        private void close() {
            if (closed) return;
            closed = true;
            cursor.close();
        }
    }
}
