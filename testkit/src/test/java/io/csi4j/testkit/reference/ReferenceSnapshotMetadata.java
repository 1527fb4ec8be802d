package io.csi4j.testkit.reference;

import io.csi4j.proto.csi.BlockMetadata;
import io.csi4j.proto.csi.BlockMetadataType;
import io.csi4j.proto.csi.GetMetadataAllocatedRequest;
import io.csi4j.proto.csi.GetMetadataAllocatedResponse;
import io.csi4j.proto.csi.GetMetadataDeltaRequest;
import io.csi4j.proto.csi.GetMetadataDeltaResponse;
import io.csi4j.proto.csi.SnapshotMetadataGrpc;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;

/**
 * The simplest correct SnapshotMetadata: a snapshot holds its whole size, reported in 64 KiB tuples (so that
 * max_results and starting_offset matter), and nothing changes between two snapshots of one volume.
 */
final class ReferenceSnapshotMetadata extends SnapshotMetadataGrpc.SnapshotMetadataImplBase {
    private static final long TUPLE = 64 * 1024;
    private static final int DEFAULT_PER_MESSAGE = 4;

    private final Store store;

    ReferenceSnapshotMetadata(Store store) {
        this.store = store;
    }

    @Override
    public void getMetadataAllocated(GetMetadataAllocatedRequest req, StreamObserver<GetMetadataAllocatedResponse> o) {
        List<List<BlockMetadata>> messages;
        long capacity;
        try {
            synchronized (store) {
                Store.SnapshotRecord s = snapshot(req.getSnapshotId(), "snapshot_id");
                capacity = s.size;
                messages = messages(tuples(capacity, checkOffset(req.getStartingOffset(), capacity)), perMessage(req.getMaxResults()));
            }
        } catch (io.grpc.StatusRuntimeException e) {
            o.onError(e);
            return;
        }
        for (List<BlockMetadata> m : messages) {
            o.onNext(GetMetadataAllocatedResponse.newBuilder().setBlockMetadataType(BlockMetadataType.VARIABLE_LENGTH)
                    .setVolumeCapacityBytes(capacity).addAllBlockMetadata(m).build());
        }
        o.onCompleted();
    }

    @Override
    public void getMetadataDelta(GetMetadataDeltaRequest req, StreamObserver<GetMetadataDeltaResponse> o) {
        long capacity;
        try {
            synchronized (store) {
                Store.SnapshotRecord base = snapshot(req.getBaseSnapshotId(), "base_snapshot_id");
                Store.SnapshotRecord target = snapshot(req.getTargetSnapshotId(), "target_snapshot_id");
                if (!base.sourceVolumeId.equals(target.sourceVolumeId)) throw Rpc.invalid("the snapshots are of different volumes");
                capacity = target.size;
                checkOffset(req.getStartingOffset(), capacity);
                perMessage(req.getMaxResults());
            }
        } catch (io.grpc.StatusRuntimeException e) {
            o.onError(e);
            return;
        }
        o.onNext(GetMetadataDeltaResponse.newBuilder().setBlockMetadataType(BlockMetadataType.VARIABLE_LENGTH)
                .setVolumeCapacityBytes(capacity).build());
        o.onCompleted();
    }

    private Store.SnapshotRecord snapshot(String id, String field) {
        Rpc.require(!id.isEmpty(), field);
        Store.SnapshotRecord s = store.snapshots.get(id);
        if (s == null) throw Rpc.notFound("snapshot " + id + " does not exist");
        return s;
    }

    private static long checkOffset(long offset, long capacity) {
        if (offset < 0 || offset > capacity) throw Rpc.outOfRange("starting_offset " + offset + " outside 0.." + capacity);
        return offset;
    }

    private int perMessage(int maxResults) {
        if (maxResults < 0) throw Rpc.invalid("max_results must not be negative");
        // the flaw: every tuple in one message, whatever max_results says
        if (store.flaws.contains(Flaw.METADATA_IGNORES_MAX_RESULTS)) return Integer.MAX_VALUE;
        return maxResults == 0 ? DEFAULT_PER_MESSAGE : maxResults;
    }

    private static List<BlockMetadata> tuples(long capacity, long from) {
        List<BlockMetadata> tuples = new ArrayList<>();
        for (long at = from - from % TUPLE; at < capacity; at += TUPLE) {
            long start = Math.max(at, from);
            long end = Math.min(at + TUPLE, capacity);
            if (end > start) tuples.add(BlockMetadata.newBuilder().setByteOffset(start).setSizeBytes(end - start).build());
        }
        return tuples;
    }

    private static List<List<BlockMetadata>> messages(List<BlockMetadata> tuples, int perMessage) {
        List<List<BlockMetadata>> messages = new ArrayList<>();
        for (int i = 0; i < tuples.size(); i += Math.min(perMessage, tuples.size() - i)) {
            messages.add(tuples.subList(i, i + Math.min(perMessage, tuples.size() - i)));
        }
        if (messages.isEmpty()) messages.add(List.of());
        return messages;
    }
}
