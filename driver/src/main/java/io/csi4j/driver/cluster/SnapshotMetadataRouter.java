package io.csi4j.driver.cluster;

import io.csi4j.driver.id.ObjectId.Kind;
import io.csi4j.proto.csi.GetMetadataAllocatedRequest;
import io.csi4j.proto.csi.GetMetadataAllocatedResponse;
import io.csi4j.proto.csi.GetMetadataDeltaRequest;
import io.csi4j.proto.csi.GetMetadataDeltaResponse;
import io.csi4j.proto.csi.SnapshotMetadataGrpc;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.Iterator;
import java.util.function.Function;
import io.csi4j.sdk.CsiException;

/**
 * csi.v1.SnapshotMetadata of the cluster controller: each stream goes to the node that holds the snapshot (a delta's
 * two snapshots are of one volume, so of one node: the base names it) and is relayed message by message, each sent
 * only when the CO's side of the call can take it, so the controller holds one message, not the map. The CO's
 * cancellation reaches the agent through the call's context.
 */
public final class SnapshotMetadataRouter extends SnapshotMetadataGrpc.SnapshotMetadataImplBase {
    private final Owners owners;

    public SnapshotMetadataRouter(Agents agents) {
        this.owners = new Owners(agents);
    }

    @Override
    public void getMetadataAllocated(GetMetadataAllocatedRequest req, StreamObserver<GetMetadataAllocatedResponse> out) {
        relay(owners.of(Kind.SNAPSHOT, req.getSnapshotId(), "snapshot"), out, a -> a.snapshotMetadata().getMetadataAllocated(req));
    }

    @Override
    public void getMetadataDelta(GetMetadataDeltaRequest req, StreamObserver<GetMetadataDeltaResponse> out) {
        relay(owners.of(Kind.SNAPSHOT, req.getBaseSnapshotId(), "snapshot"), out, a -> a.snapshotMetadata().getMetadataDelta(req));
    }

    /** The whole stream is read within one {@link Agent#call}: a stream whose agent falls silent is cut as a call is. */
    private static <T> void relay(Agent node, StreamObserver<T> out, Function<Agent, Iterator<T>> stream) {
        var call = (ServerCallStreamObserver<T>) out;
        var gate = new ReadyGate(call);
        boolean relayed = node.call(a -> {
            Iterator<T> messages = stream.apply(a);  // errors of a stream surface as it is read, inside the call
            while (messages.hasNext()) {
                T message = messages.next();
                try {
                    if (!gate.awaitReady()) return false;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw CsiException.aborted("interrupted while relaying the stream of " + node);
                }
                call.onNext(message);
            }
            return true;
        });
        if (relayed) call.onCompleted();
    }
}
