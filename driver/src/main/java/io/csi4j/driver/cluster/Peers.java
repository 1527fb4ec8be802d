package io.csi4j.driver.cluster;

import io.csi4j.driver.mobility.SourceSender;
import io.csi4j.proto.cluster.NodeAgentGrpc;
import io.csi4j.proto.cluster.PeerAgent;
import io.csi4j.sdk.CsiException;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.MutualTls;
import io.grpc.ManagedChannel;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Channels from this agent to other agents, over the same mutual TLS as the controller's link: the peer must show a
 * certificate of the cluster's CA carrying the name the controller dials it by, and this agent shows its own.
 */
public final class Peers implements AutoCloseable {
    static final int WINDOW = 16 << 20;
    private final MutualTls tls;
    private final ConcurrentHashMap<String, ManagedChannel> channels = new ConcurrentHashMap<>();

    public Peers(MutualTls tls) {
        this.tls = tls;
    }

    public NodeAgentGrpc.NodeAgentBlockingStub agent(PeerAgent peer) {
        if (tls == null) throw CsiException.failedPrecondition("this agent has no TLS identity to reach node '"
                + peer.getNodeId() + "' with");
        String key = peer.getAddress() + "|" + peer.getAuthority();
        ManagedChannel channel = channels.computeIfAbsent(key, k -> {
            int colon = peer.getAddress().lastIndexOf(':');
            if (colon <= 0) throw CsiException.invalidArgument("source node address '" + peer.getAddress() + "' is not host:port");
            String host = peer.getAddress().substring(0, colon).replaceAll("^\\[|]$", "");
            int port = Integer.parseInt(peer.getAddress().substring(colon + 1));
            // a window of many chunks: the sender keeps writing while this side writes what arrived to disk
            return Channels.builder(new Endpoint.Tcp(host, port), tls, peer.getAuthority().isEmpty() ? host : peer.getAuthority())
                    .flowControlWindow(WINDOW).maxInboundMessageSize(4 * SourceSender.CHUNK).build();
        });
        return NodeAgentGrpc.newBlockingStub(channel);
    }

    @Override
    public void close() {
        channels.values().forEach(ManagedChannel::shutdownNow);
        for (ManagedChannel c : channels.values()) {
            try {
                c.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
