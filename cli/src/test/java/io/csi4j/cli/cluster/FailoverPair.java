package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.RECORD;
import static io.csi4j.cli.cluster.ClusterReplicationTest.ext4;
import static io.csi4j.cli.cluster.ClusterReplicationTest.record;
import static io.csi4j.cli.cluster.ClusterReplicationTest.replicated;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.GetReplicaRequest;
import io.csi4j.proto.cluster.GetReplicaResponse;
import io.csi4j.proto.cluster.NodeAgentGrpc;
import io.csi4j.proto.cluster.PeerAgent;
import io.csi4j.proto.cluster.SyncReplicaRequest;
import io.csi4j.proto.cluster.SyncReplicaResponse;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Two image-engine agents (node-a, node-b) and a controller started with {@code --failover-after}, as real processes
 * over mutual TLS on loopback: the failover and partition tests' cluster, with "kubelet" on each node (stage and
 * publish through the node's own socket, with the staging and target paths under the test's directory), the CO's
 * ControllerPublishVolume (also retried through the failover delay, as a CO does), a round started at once, a primary's
 * agent stopped until its volume fails over, a pod writing records through a partitioned primary until its copy is
 * fenced, and each node's replication state file as it is on disk. A test class usually starts and stops it with
 * {@link ClassCluster}.
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

    /** A volume of two replicas as the controller placed it: its id, its primary's node and its secondary's. */
    record Replicated(String id, String primary, String secondary) {}

    /** CreateVolume of two replicas with a day's interval: only the rounds the test starts run. */
    Replicated createReplicated(String name) {
        return created(csi().createVolume(replicated(name, 2, "24h").build()).getVolume().getVolumeId());
    }

    /** The same with {@code bytes} of capacity instead of 64 MiB. */
    Replicated createReplicated(String name, long bytes) {
        return created(csi().createVolume(replicated(name, 2, "24h").setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(bytes))
                .build()).getVolume().getVolumeId());
    }

    private static Replicated created(String id) {
        var tags = ReplicatedVolumeId.parse(id).orElseThrow().tags();
        return new Replicated(id, tags.get(0), tags.get(1));
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
        return stageAndPublish(node, id, ext4());
    }

    /** With another capability than an ext4 mount (a block volume's: the target is then its device node). */
    Path stageAndPublish(String node, String id, VolumeCapability capability) throws Exception {
        node(node).nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(staging(node, id).toString()).setVolumeCapability(capability).build());
        node(node).nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging(node, id).toString())
                .setTargetPath(target(node, id).toString()).setVolumeCapability(capability).build());
        return target(node, id);
    }

    /** Node-side only (unmounts, detaches): what cleans up whatever the controller's side says. */
    void unpublishAndUnstage(String node, String id) throws Exception {
        node(node).nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target(node, id).toString()).build());
        node(node).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging(node, id).toString()).build());
    }

    void controllerPublish(String node, String id) {
        controllerPublish(node, id, ext4());
    }

    /** With another capability than an ext4 mount (a block volume's). */
    void controllerPublish(String node, String id, VolumeCapability capability) {
        csi().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(node)
                .setVolumeCapability(capability).build());
    }

    void controllerUnpublish(String node, String id) {
        csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(node).build());
    }

    /** The node's replica of the volume as its agent answers it (NodeAgent.GetReplica). */
    GetReplicaResponse replica(String node, String id) {
        return agent(node).getReplica(GetReplicaRequest.newBuilder().setVolumeId(id).build());
    }

    /**
     * ControllerPublishVolume on {@code node}, retried each second while UNAVAILABLE (the failover delay) for 120 s at
     * most, as a CO retries; returns how many UNAVAILABLE answers came first.
     */
    int publishRetryingWhileUnavailable(String node, String id) throws InterruptedException {
        return publishRetryingWhileUnavailable(node, id, ext4());
    }

    /** With another capability than an ext4 mount (a block volume's). */
    int publishRetryingWhileUnavailable(String node, String id, VolumeCapability capability) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        int unavailable = 0;
        while (true) {
            try {
                controllerPublish(node, id, capability);
                return unavailable;
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() > deadline) throw e;
                unavailable++;
                Thread.sleep(1000);
            }
        }
    }

    /** A failover as the CO saw it: how long after the primary's agent was stopped the publish succeeded, and the UNAVAILABLE answers first. */
    record Failover(long millis, int unavailable) {}

    /**
     * The partition: {@code primary}'s agent SIGSTOPped (by its pid; its kernel mounts keep taking writes), then
     * ControllerPublishVolume on {@code secondary} retried until the volume fails over to it. The agent stays stopped:
     * the caller continues it (SIGCONT), also in its clean-up; if the failover never comes it is continued here.
     */
    Failover stopAgentUntilFailover(String primary, String secondary, String id) throws Exception {
        var agent = cluster.agent(primary);
        agent.child.signal("STOP");
        long stopped = System.nanoTime();
        try {
            int unavailable = publishRetryingWhileUnavailable(secondary, id);
            return new Failover((System.nanoTime() - stopped) / 1_000_000, unavailable);
        } catch (Exception | Error e) {
            agent.child.signal("CONT");
            throw e;
        }
    }

    /** A round now: the secondary pulls from the primary (NodeAgent.SyncReplica on the secondary's agent). */
    SyncReplicaResponse round(String secondary, String primary, String id) {
        var channel = Channels.builder(new Endpoint.Tcp("127.0.0.1", cluster.agent(secondary).port), cluster.controllerTls, "127.0.0.1").build();
        channels.add(channel);
        var from = PeerAgent.newBuilder().setNodeId(primary).setAddress(cluster.agent(primary).address()).setAuthority("127.0.0.1").build();
        return NodeAgentGrpc.newBlockingStub(channel).withDeadlineAfter(120, TimeUnit.SECONDS)
                .syncReplica(SyncReplicaRequest.newBuilder().setVolumeId(id).setPrimary(from).build());
    }

    /**
     * The pod on a partitioned primary: record {@code seq} (ClusterReplicationTest's records) at {@code seq * RECORD},
     * one at a time, each fsynced, every 50 ms, until a write fails; what failed and when are kept. {@code name} ("pod",
     * "writer") is how failure messages call it.
     */
    static final class Pod implements Runnable {
        /** Writes one record at an offset and fsyncs it (through a held descriptor, or a file opened each time). */
        interface Sink {
            void write(ByteBuffer record, long offset) throws IOException;
        }

        final String name;
        final Sink sink;
        final AtomicInteger next;
        final AtomicReference<IOException> stoppedBy = new AtomicReference<>();
        volatile long stoppedAt;
        volatile boolean quit;
        private Thread thread;

        Pod(String name, Sink sink, int from) {
            this.name = name;
            this.sink = sink;
            this.next = new AtomicInteger(from);
        }

        /** Writes on in a platform thread of that name. */
        Pod start(String threadName) {
            thread = Thread.ofPlatform().name(threadName).start(this);
            return this;
        }

        /** Waits (30 s at most) for the thread to end: after the pod's write failed, or after {@link #stop}. */
        void join() throws InterruptedException {
            if (thread != null) thread.join(TimeUnit.SECONDS.toMillis(30));
        }

        /** Asks it to stop and waits (30 s at most). */
        void stop() throws InterruptedException {
            quit = true;
            join();
        }

        @Override
        public void run() {
            while (!quit) {
                int seq = next.get();
                try {
                    sink.write(ByteBuffer.wrap(record(seq)), (long) seq * RECORD);
                } catch (IOException e) {
                    stoppedAt = System.nanoTime();
                    stoppedBy.set(e);
                    return;
                }
                next.incrementAndGet();
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    /**
     * Waits (bounded by {@code boundSeconds} from {@code since}, a System.nanoTime) until {@code node}'s copy is FENCED
     * on disk and the pod's writes have failed; returns when the FENCED state was first seen. {@code what} names the
     * event {@code since} is (e.g. "SIGCONT") in the failure message.
     */
    long awaitFencedAndPodStopped(String node, String id, Pod pod, long since, long boundSeconds, String what) throws Exception {
        long fencedNs = 0;
        long bound = since + TimeUnit.SECONDS.toNanos(boundSeconds);
        while (fencedNs == 0 || pod.stoppedBy.get() == null) {
            if (fencedNs == 0 && state(node, id).contains("\"FENCED\"")) fencedNs = System.nanoTime();
            if (System.nanoTime() > bound) {
                throw new AssertionError("within " + boundSeconds + " s of " + what + ": state of " + node + " " + state(node, id)
                        + ", " + pod.name + " stopped by " + pod.stoppedBy.get());
            }
            Thread.sleep(100);
        }
        return fencedNs;
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
