package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.RECORD;
import static io.csi4j.cli.cluster.ClusterReplicationTest.ext4;
import static io.csi4j.cli.cluster.ClusterReplicationTest.record;
import static io.csi4j.cli.cluster.ClusterReplicationTest.replicated;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertEquals;

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
import java.util.function.Predicate;
import java.util.regex.Pattern;

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
        this(tmp, failoverAfterSeconds, nodes, "64M");
    }

    /** With another --copy-bandwidth of each agent ("4M": a round of 16 MiB takes seconds, long enough to kill it mid-copy). */
    FailoverPair(Path tmp, int failoverAfterSeconds, List<String> nodes, String copyBandwidth) throws Exception {
        this.tmp = tmp;
        this.cluster = ProcessCluster.start(tmp, nodes, List.of("--engine", "image", "--pool-size", "1G", "--copy-bandwidth", copyBandwidth),
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

    /**
     * The failover of the tests that lose a primary: {@code a}'s agent SIGKILLed by its pid (its mounts stay in the
     * kernel), then ControllerPublishVolume on {@code b} retried while UNAVAILABLE, as a CO does; B is then the primary
     * of epoch 2. Prints how long it took; returns when B's publish succeeded (a System.nanoTime).
     */
    long failoverByPublish(String a, String b, String id) throws Exception {
        cluster.agent(a).child.signal("KILL");
        long killed = System.nanoTime();
        int unavailable = publishRetryingWhileUnavailable(b, id);
        long published = System.nanoTime();
        System.out.printf("failover of %s from %s to %s: %d ms after the kill (%d UNAVAILABLE first)%n", id, a, b,
                (published - killed) / 1_000_000, unavailable);
        assertEquals(2, replica(b, id).getEpoch());
        assertEquals("PRIMARY", replica(b, id).getRole());
        return published;
    }

    /**
     * The failover by the CO's force-detach: {@code a}'s agent SIGKILLed by its pid (its mounts stay in the kernel), then
     * ControllerUnpublishVolume from A {@link #retrying} until it fails the volume over to {@code b}, the copy with the
     * newest point, which is then the primary. Prints how long it took; returns when the unpublish succeeded.
     */
    long failoverByForceDetach(String a, String b, String id) throws Exception {
        cluster.agent(a).child.signal("KILL");
        long killed = System.nanoTime();
        retrying(() -> controllerUnpublish(a, id), "the force-detach from the lost primary " + a);
        long failedOver = System.nanoTime();
        System.out.printf("%s failed over to %s by the unpublish from %s, %d ms after the kill%n", id, b, a, (failedOver - killed) / 1_000_000);
        assertEquals("PRIMARY", replica(b, id).getRole(), "the copy with the newest point is promoted");
        return failedOver;
    }

    /** The node's agent started again (same data directory and port) if it is not running, and every node answering. */
    void restartIfDown(String node) throws Exception {
        var agent = cluster.agent(node);
        if (agent.child == null || !agent.child.alive()) {
            agent.start();
            cluster.awaitEveryNode();
        }
    }

    /** Calls {@code call} each second while it answers UNAVAILABLE or ABORTED (a delay, a round under way), 120 s at most. */
    void retrying(Runnable call, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            try {
                call.run();
                return;
            } catch (StatusRuntimeException e) {
                var code = e.getStatus().getCode();
                if ((code != Status.Code.UNAVAILABLE && code != Status.Code.ABORTED) || System.nanoTime() > deadline) {
                    throw new AssertionError(what + ": " + e.getStatus() + "\ncontroller:\n" + cluster.controller.stderr(), e);
                }
                Thread.sleep(1000);
            }
        }
    }

    /** Polls the node's replica (UNAVAILABLE while its agent starts) until {@code done} holds, within {@code boundSeconds}. */
    GetReplicaResponse awaitReplica(String node, String id, long boundSeconds, Predicate<GetReplicaResponse> done) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(boundSeconds);
        while (true) {
            GetReplicaResponse now;
            try {
                now = replica(node, id);
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() > deadline) throw e;
                Thread.sleep(200);
                continue;
            }
            if (done.test(now)) return now;
            if (System.nanoTime() > deadline) throw new AssertionError("within " + boundSeconds + " s, node " + node + " still answers " + now);
            Thread.sleep(200);
        }
    }

    /** "replica of <id> now holds point <p> from node '<n>': <bytes> bytes ..." in an agent's log (Rounds.pull). */
    static final Pattern PULLED = Pattern.compile("replica of (\\S+) now holds point (\\S+) from node '([^']+)': (\\d+) bytes(.*)");

    /** The pulls {@code node}'s agent logged of the volume from {@code from}: {point, bytes, the rest of the line}. */
    List<String[]> pulls(String node, String id, String from) {
        return cluster.agent(node).child.stderr().lines().map(PULLED::matcher).filter(m -> m.find()
                && m.group(1).equals(id) && m.group(3).equals(from)).map(m -> new String[] {m.group(2), m.group(4), m.group(5)}).toList();
    }

    /** The node's data directory (its pool, catalog, replication state and CSI socket). */
    Path dataDir(String node) {
        return tmp.resolve(node);
    }

    /** The point the node's copy holds, from its durable state ("" before the first round or without a state). */
    String point(String node, String id) throws Exception {
        return ReplicaFixture.point(dataDir(node), id);
    }

    /** The files in the node's pool .tmp (a round builds its new image there). */
    List<String> tmpFiles(String node) throws Exception {
        return ReplicaFixture.tmpFiles(dataDir(node));
    }

    /** What a test writes through a mount besides its records (seeded random files); returns their SHA-256, or null. */
    interface Data {
        byte[] write(Path mount) throws Exception;
    }

    /** The test's mounts of {@code id} (see {@link Mounted}); {@code killed} is the node whose agent it may kill. */
    Mounted mounted(String id, String killed) {
        return new Mounted(id, killed);
    }

    /**
     * A test's pods on the nodes, for a try-with-resources around it: {@link #on} stages and publishes the volume on a
     * node, {@link #off} takes that down (node-side). Closed, pass or fail: the steps given to {@link #first} run, the
     * agent the test may have killed is started again if it is down, then every mount still there is taken down; each
     * error is kept, the later ones added to the first as suppressed (and to the test's own failure by the try, so that
     * one is what is reported).
     */
    final class Mounted implements AutoCloseable {
        private final String id;
        private final String killed;
        private final java.util.Set<String> nodes = new java.util.LinkedHashSet<>();
        private final List<Step> before = new java.util.ArrayList<>();

        private Mounted(String id, String killed) {
            this.id = id;
            this.killed = killed;
        }

        /** NodeStageVolume and NodePublishVolume on {@code node} (the CO's publish done); returns the target path. */
        Path on(String node) throws Exception {
            Path target = stageAndPublish(node, id);
            nodes.add(node);
            return target;
        }

        /** NodeUnpublishVolume and NodeUnstageVolume on {@code node}: its pod is gone. */
        void off(String node) throws Exception {
            unpublishAndUnstage(node, id);
            nodes.remove(node);
        }

        /** A clean-up step that goes before the rest, in the order given (a pod stopped, a stopped agent continued). */
        void first(Step step) {
            before.add(step);
        }

        /**
         * A pod's start on {@code primary}: the CO's publish there, {@link #on}, records {@code 0..round-1} written through
         * the mount and a round to {@code secondary} (the last complete point), then records {@code round..to-1} (after
         * it: a failover loses them). Returns the mount.
         */
        Path recordsAroundARound(String primary, String secondary, int round, int to) throws Exception {
            controllerPublish(primary, id);
            Path mount = on(primary);
            writeRecords(mount.resolve("records"), 0, round);
            FailoverPair.this.round(secondary, primary, id);
            writeRecords(mount.resolve("records"), round, to);
            return mount;
        }

        /** {@link #off}, then ControllerUnpublishVolume from {@code node}: the pod there is gone as the CO sees it. */
        void gone(String node) throws Exception {
            off(node);
            controllerUnpublish(node, id);
        }

        /**
         * A handoff to {@code node}: ControllerPublishVolume there (retried while UNAVAILABLE or ABORTED: a round under
         * way) makes it the primary of {@code epoch}; then {@link #on}. Returns its target path.
         */
        Path handedTo(String node, long epoch) throws Exception {
            retrying(() -> controllerPublish(node, id), "the handoff to " + node);
            assertEquals("PRIMARY", replica(node, id).getRole());
            assertEquals(epoch, replica(node, id).getEpoch());
            return on(node);
        }

        @Override
        public void close() throws Exception {
            Throwable first = null;
            List<Step> steps = new java.util.ArrayList<>(before);
            steps.add(() -> restartIfDown(killed));
            for (String node : List.copyOf(nodes)) steps.add(() -> off(node));
            for (Step step : steps) {
                try {
                    step.run();
                } catch (Exception | AssertionError e) {
                    if (first == null) first = e;
                    else first.addSuppressed(e);
                }
            }
            if (first instanceof Exception e) throw e;
            if (first instanceof AssertionError e) throw e;
        }
    }

    /** A step of a test's clean-up. */
    interface Step {
        void run() throws Exception;
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
