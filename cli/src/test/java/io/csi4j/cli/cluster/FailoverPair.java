package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.ext4;

import io.csi4j.proto.cluster.NodeAgentGrpc;
import io.csi4j.proto.cluster.PeerAgent;
import io.csi4j.proto.cluster.SyncReplicaRequest;
import io.csi4j.proto.cluster.SyncReplicaResponse;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * Two image-engine agents (node-a, node-b) and a controller started with {@code --failover-after}, as real processes
 * over mutual TLS on loopback: the failover and partition tests' cluster, with "kubelet" on each node (stage and
 * publish through the node's own socket, with the staging and target paths under the test's directory), the CO's
 * ControllerPublishVolume, a round started at once, and each node's replication state file as it is on disk.
 */
final class FailoverPair implements AutoCloseable {
    static final List<String> NODES = List.of("node-a", "node-b");

    final Path tmp;
    final ProcessCluster cluster;
    private final List<ManagedChannel> channels = new CopyOnWriteArrayList<>();

    FailoverPair(Path tmp, int failoverAfterSeconds) throws Exception {
        this(tmp, failoverAfterSeconds, NODES);
    }

    /** The same cluster with other nodes (three for the follow test). */
    FailoverPair(Path tmp, int failoverAfterSeconds, List<String> nodes) throws Exception {
        this.tmp = tmp;
        this.cluster = ProcessCluster.start(tmp, nodes, List.of("--engine", "image", "--pool-size", "1G", "--copy-bandwidth", "64M"),
                List.of("--failover-after", failoverAfterSeconds + "s"));
    }

    /** The node's agent as the controller dials it (mutual TLS). */
    NodeAgentGrpc.NodeAgentBlockingStub agent(String node) {
        var channel = Channels.builder(new Endpoint.Tcp("127.0.0.1", cluster.agent(node).port), cluster.controllerTls, "127.0.0.1").build();
        channels.add(channel);
        return NodeAgentGrpc.newBlockingStub(channel).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    ControllerGrpc.ControllerBlockingStub csi() {
        return ControllerGrpc.newBlockingStub(cluster.controllerChannel()).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    NodeGrpc.NodeBlockingStub node(String nodeId) {
        var channel = Channels.connect(Endpoint.parse("unix://" + tmp.resolve(nodeId).resolve("csi.sock")));
        channels.add(channel);
        return NodeGrpc.newBlockingStub(channel).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    Path staging(String node, String id) throws Exception {
        return Files.createDirectories(tmp.resolve("staging-" + node).resolve(id));
    }

    Path target(String node, String id) throws Exception {
        return Files.createDirectories(tmp.resolve("target-" + node)).resolve(id);
    }

    Path stageAndPublish(String node, String id) throws Exception {
        node(node).nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(staging(node, id).toString()).setVolumeCapability(ext4()).build());
        node(node).nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging(node, id).toString())
                .setTargetPath(target(node, id).toString()).setVolumeCapability(ext4()).build());
        return target(node, id);
    }

    /** Node-side only (unmounts, detaches): what cleans up whatever the controller's side says. */
    void unpublishAndUnstage(String node, String id) throws Exception {
        node(node).nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target(node, id).toString()).build());
        node(node).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging(node, id).toString()).build());
    }

    void controllerPublish(String node, String id) {
        csi().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(node)
                .setVolumeCapability(ext4()).build());
    }

    /** A round now: the secondary pulls from the primary (NodeAgent.SyncReplica on the secondary's agent). */
    SyncReplicaResponse round(String secondary, String primary, String id) {
        var channel = Channels.builder(new Endpoint.Tcp("127.0.0.1", cluster.agent(secondary).port), cluster.controllerTls, "127.0.0.1").build();
        channels.add(channel);
        var from = PeerAgent.newBuilder().setNodeId(primary).setAddress(cluster.agent(primary).address()).setAuthority("127.0.0.1").build();
        return NodeAgentGrpc.newBlockingStub(channel).withDeadlineAfter(120, TimeUnit.SECONDS)
                .syncReplica(SyncReplicaRequest.newBuilder().setVolumeId(id).setPrimary(from).build());
    }

    /** The node's durable replication state of the volume, as on disk ("" when it has none). */
    String state(String node, String id) throws Exception {
        Path file = tmp.resolve(node).resolve("replication").resolve(id + ".json");
        return Files.exists(file) ? Files.readString(file) : "";
    }

    @Override
    public void close() throws Exception {
        channels.forEach(ManagedChannel::shutdownNow);
        cluster.close();
    }
}
