package io.csi4j.driver.cluster;

import io.csi4j.driver.mobility.SourceNode;
import io.csi4j.driver.mobility.SourcePart;
import io.csi4j.driver.mobility.SourceQuery;
import io.csi4j.proto.cluster.PeerAgent;
import io.csi4j.proto.cluster.SourceChunk;
import io.grpc.Context;
import io.grpc.StatusRuntimeException;
import java.util.Collections;
import java.util.Iterator;
import java.util.function.Supplier;

/**
 * A copy's source node, reached over the agents' link ({@link Peers}): NodeAgent.ReadSource as the domain's
 * {@link SourceNode}. Its failures leave as {@link AgentStatus#fromSource} tells them. A message of several ranges is
 * handed on one range at a time, as if each had come alone: the receiver checks and writes them as ever.
 */
final class PeerSource implements SourceNode {
    private final Peers peers;
    private final PeerAgent peer;

    PeerSource(Peers peers, PeerAgent peer) {
        this.peers = peers;
        this.peer = peer;
    }

    @Override
    public String nodeId() {
        return peer.getNodeId();
    }

    /**
     * The stream is bound to a context of its own, not the calling thread's: the copy outlives the CreateVolume that
     * started it (its retry joins it), and closing the transfer cancels the stream, which stops the sender.
     */
    @Override
    public Transfer read(SourceQuery query) {
        Context.CancellableContext stream = Context.ROOT.withCancellation();
        Context previous = stream.attach();
        try {
            Iterator<SourceChunk> chunks = answer(() -> peers.agent(peer).readSource(CopyWire.request(query)));
            return new Transfer() {
                private Iterator<SourcePart> arrived = Collections.emptyIterator();   // the rest of a message of several ranges

                @Override
                public SourcePart next() {
                    while (!arrived.hasNext()) {
                        SourceChunk chunk = answer(() -> chunks.hasNext() ? chunks.next() : null);
                        if (chunk == null) return null;
                        arrived = CopyWire.parts(chunk, peer.getNodeId()).iterator();
                    }
                    return arrived.next();
                }

                @Override
                public void close() {
                    stream.close();
                }
            };
        } catch (RuntimeException e) {
            stream.close();
            throw e;
        } finally {
            stream.detach(previous);
        }
    }

    private <T> T answer(Supplier<T> call) {
        try {
            return call.get();
        } catch (StatusRuntimeException e) {
            throw AgentStatus.fromSource(e, peer);
        }
    }
}
