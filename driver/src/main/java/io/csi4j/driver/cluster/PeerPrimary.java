package io.csi4j.driver.cluster;

import io.csi4j.driver.mobility.SourceNode;
import io.csi4j.driver.replication.Rounds;
import io.csi4j.proto.cluster.CutPointRequest;
import io.csi4j.proto.cluster.PeerAgent;
import io.grpc.StatusRuntimeException;

/** A replicated volume's primary as a secondary reaches it over the agents' link: NodeAgent.CutPoint and ReadSource. */
final class PeerPrimary implements Rounds.Primary {
    private final Peers peers;
    private final PeerAgent peer;

    PeerPrimary(Peers peers, PeerAgent peer) {
        this.peers = peers;
        this.peer = peer;
    }

    @Override
    public String cutPoint(String volumeId, String holder, String held, boolean mayKeepHeld) {
        try {
            return peers.agent(peer).cutPoint(CutPointRequest.newBuilder().setVolumeId(volumeId).setHolderNodeId(holder)
                    .setHeldPoint(held).setMayKeepHeld(mayKeepHeld).build()).getPoint();
        } catch (StatusRuntimeException e) {
            throw AgentStatus.fromSource(e, peer);
        }
    }

    @Override
    public SourceNode source() {
        return new PeerSource(peers, peer);
    }
}
