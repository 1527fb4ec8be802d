package io.csi4j.driver.cluster;

import io.csi4j.driver.DriverConfig;
import io.csi4j.proto.addons.identity.Capability;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.GetPluginInfoRequest;
import io.csi4j.proto.csi.GroupControllerGrpc;
import io.csi4j.proto.csi.IdentityGrpc;
import io.csi4j.sdk.CsiException;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.MutualTls;
import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;
import io.csi4j.proto.addons.identity.GetCapabilitiesRequest;
import io.csi4j.proto.cluster.NodeAgentGrpc;
import io.csi4j.proto.csi.GetPluginCapabilitiesRequest;
import io.csi4j.proto.csi.PluginCapability;
import io.csi4j.proto.csi.SnapshotMetadataGrpc;
import io.csi4j.proto.csi.ProbeRequest;
import io.grpc.ClientCall;
import io.grpc.Context;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One node agent as the controller sees it: a mutual-TLS channel to its agent endpoint and the node id it
 * said it serves (learned from GetPluginInfo's manifest, kept when it later stops answering, so a failure
 * can name the node).
 */
public final class Agent implements AutoCloseable {
    private final String address;
    private final String authority;
    private final ManagedChannel channel;
    private final LoopChannels channels;
    private final Duration callTimeout;
    private volatile boolean snapshotMetadata;
    /** What the agent's CSI-Addons identity said it offers. */
    private volatile List<Capability> addonsCapabilities = List.of();
    private volatile String nodeId;
    private volatile String problem = "not asked yet";
    private volatile String version = "";
    /** Its extra topology segments (a zone...), as its manifest said: what replicas spread over. */
    private volatile java.util.Map<String, String> segments = java.util.Map.of();
    /** When it last answered anything (epoch ms), 0 for never. */
    private volatile long lastAnswerMillis;
    /** When it last answered, on the monotonic clock: what a call's wait and a failover count from ({@link Liveness}). */
    private final LastAnswer lastAnswer = new LastAnswer(System::nanoTime);
    /** Calls outstanding to it, each cut when the agent falls silent ({@link #tick}). */
    private final Set<Watch> watches = ConcurrentHashMap.newKeySet();
    /** A heartbeat Probe is outstanding: the next is sent only after it ends. */
    private final AtomicBoolean probing = new AtomicBoolean();
    /** When it first said it is {@link #nodeId} (System.nanoTime), for {@link Claims}. */
    private volatile long claimedSince;
    /** Why it is not used although it answers (another live agent holds its node), or null. */
    private volatile String refusal;

    /** Told when a call finds this agent silent: the directory then looks again (re-resolves, re-asks) in the background. */
    private final Runnable onSilence;

    Agent(Endpoint.Tcp endpoint, String authority, MutualTls tls, Duration callTimeout) {
        this(endpoint, authority, tls, callTimeout, () -> {});
    }

    Agent(Endpoint.Tcp endpoint, String authority, MutualTls tls, Duration callTimeout, Runnable onSilence) {
        this.address = endpoint.host() + ":" + endpoint.port();
        this.authority = authority;
        this.channel = Channels.builder(endpoint, tls, authority).build();
        this.channels = new LoopChannels(channel, loop -> Channels.builder(endpoint, tls, authority).eventLoopGroup(loop).build());
        this.callTimeout = callTimeout;
        this.onSilence = onSilence;
    }

    /** host:port of the agent endpoint, as dialled. */
    public String address() { return address; }

    /** The name its certificate carries (what the controller was told to dial). */
    public String authority() { return authority; }

    /** The node this agent serves, or null while it has never answered. */
    public String nodeId() { return nodeId; }

    public String topologyValue() { return DriverConfig.topologyValue(nodeId); }

    /** The node's extra topology segments ({@code csi4j serve --topology}), empty before it answered or without any. */
    public java.util.Map<String, String> segments() { return segments; }

    /** Why the agent is not identified (when {@link #nodeId()} is null), or why its last identification failed; null when it answered. */
    String problem() { return problem; }

    /** True when the last identification (or call) got an answer. */
    public boolean answering() { return problem == null; }

    /** The vendor version it reported, empty before it answered. */
    public String version() { return version; }

    /** When it last answered (epoch milliseconds), 0 when never. */
    public long lastAnswerMillis() { return lastAnswerMillis; }

    long claimedSince() { return claimedSince; }

    /** Why the controller does not route to it (a duplicate node claim), or null. */
    public String refusal() { return refusal; }

    void refuse(String reason) { this.refusal = reason; }

    private void answered() {
        lastAnswer.answered();
        lastAnswerMillis = System.currentTimeMillis();
        problem = null;
    }

    /** How long it has said nothing (since its last answer, or since it was first dialled). */
    public Duration silentFor() {
        return lastAnswer.silentFor();
    }

    /** How errors name this agent: {@code node 'n1' (10.0.0.7:7443)}. */
    public String describe() {
        return nodeId == null ? "agent " + address : "node '" + nodeId + "' (" + address + ")";
    }

    /** Asks the agent which node it is; true when it answered as a csi4j agent. */
    /** Whether the agent reclaims space (CSI-Addons ReclaimSpace, as its addons identity said). */
    public boolean reclaimsSpace() {
        return advertises(Capability::hasReclaimSpace);
    }

    /** Whether one of the capabilities the agent's CSI-Addons identity listed is {@code which}. */
    public boolean advertises(Predicate<Capability> which) {
        return addonsCapabilities.stream().anyMatch(which);
    }

    /** Whether the agent serves csi.v1.SnapshotMetadata (its engine keeps snapshots as block images), as it said. */
    public boolean servesSnapshotMetadata() {
        return snapshotMetadata;
    }

    boolean identify() {
        try {
            var info = IdentityGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
            String node = info.getManifestMap().get("node");
            if (!DriverConfig.PLUGIN_NAME.equals(info.getName()) || node == null || node.isEmpty()) {
                problem = "it is not a csi4j node agent (plugin '" + info.getName() + "', no node in its manifest)";
                return false;
            }
            if (!node.equals(nodeId)) claimedSince = System.nanoTime();
            nodeId = node;
            version = info.getVendorVersion();
            segments = segments(info.getManifestMap());
            snapshotMetadata = IdentityGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .getPluginCapabilities(GetPluginCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList()
                    .stream().anyMatch(c -> c.getService().getType() == PluginCapability.Service.Type.SNAPSHOT_METADATA_SERVICE);
            addonsCapabilities = io.csi4j.proto.addons.identity.IdentityGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .getCapabilities(GetCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList();
            problem = null;
            answered();
            return true;
        } catch (StatusRuntimeException e) {
            problem = describeFailure(e);
            channels.resetConnectBackoff();  // so the next call tries at once, not after gRPC's backoff
            return false;
        }
    }

    /** The manifest's extra topology segments (entries named by {@link DriverConfig#TOPOLOGY_MANIFEST_PREFIX}). */
    static java.util.Map<String, String> segments(java.util.Map<String, String> manifest) {
        var found = new java.util.TreeMap<String, String>();
        String prefix = DriverConfig.TOPOLOGY_MANIFEST_PREFIX;
        manifest.forEach((key, value) -> { if (key.startsWith(prefix)) found.put(key.substring(prefix.length()), value); });
        return java.util.Map.copyOf(found);
    }

    /**
     * Calls {@code rpc} on this agent; its errors come back as they are, a silence as UNAVAILABLE naming the node: an
     * error of the transport, or {@link Liveness#SILENCE} without any answer from the agent while the call is
     * outstanding (the call is then cancelled). Everything {@code rpc} sends runs in a context of its own, so a
     * stream read inside {@code rpc} is watched and cut too.
     */
    public <T> T call(Function<Agent, T> rpc) {
        TransportThread.mayWait();
        Context.CancellableContext scope = Context.current().withCancellation();
        Watch watch = new Watch(lastAnswer.now(), () -> scope.cancel(null));
        watches.add(watch);
        Context previous = scope.attach();
        try {
            T result = rpc.apply(this);
            answered();
            return result;
        } catch (StatusRuntimeException e) {
            throw watch.cut ? silence() : translate(e);
        } finally {
            scope.detach(previous);
            watch.done = true;
            watches.remove(watch);
            scope.cancel(null);
        }
    }

    /**
     * Sends one unary call to this agent and returns at once: its answer, or its error translated as by
     * {@link #call}, completes {@code out} on the thread that reads the agent's reply (no hand-off to another
     * thread; from an event loop, that loop's own channel: see {@link LoopChannels}). Started within the server
     * call's context, the agent call carries the CO's deadline and is cancelled with it.
     */
    public <Req, Resp> void forward(MethodDescriptor<Req, Resp> method, Req request, StreamObserver<Resp> out) {
        CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(callTimeout.toNanos(), TimeUnit.NANOSECONDS)
                .withExecutor(MoreExecutors.directExecutor());
        ClientCall<Req, Resp> call = channels.current().newCall(method, options);
        Watch watch = new Watch(lastAnswer.now(), () -> call.cancel("the agent fell silent", null));
        ClientCalls.asyncUnaryCall(call, request, new StreamObserver<>() {
            @Override
            public void onNext(Resp response) {
                answered();
                out.onNext(response);
            }

            @Override
            public void onError(Throwable t) {
                watch.done = true;
                watches.remove(watch);
                out.onError(watch.cut ? silence() : t instanceof StatusRuntimeException e ? translate(e)
                        : translate(Status.fromThrowable(t).asRuntimeException()));
            }

            @Override
            public void onCompleted() {
                watch.done = true;
                watches.remove(watch);
                out.onCompleted();
            }
        });
        if (!watch.done) watches.add(watch);  // after the start: a watch never cancels a call not yet started
    }

    /** One call outstanding to this agent, and how to cancel it. */
    private static final class Watch {
        final long start;
        final Runnable cancel;
        volatile boolean done;
        volatile boolean cut;

        Watch(long start, Runnable cancel) {
            this.start = start;
            this.cancel = cancel;
        }
    }

    /**
     * Called every {@link Liveness#HEARTBEAT} by the directory: sends a heartbeat Probe to an identified agent unless
     * one is outstanding, and cuts the calls outstanding to it when it has said nothing for longer than
     * {@link Liveness#SILENCE} (counted from the later of its last answer and the call's start: {@link LastAnswer}).
     */
    void tick() {
        watches.removeIf(w -> w.done);  // a call that ended before its watch was added
        if (nodeId != null) heartbeat();
        for (Watch watch : watches) {
            if (!watch.done && !watch.cut && lastAnswer.cuts(watch.start, Liveness.SILENCE)) {
                watch.cut = true;
                watch.cancel.run();
            }
        }
    }

    private void heartbeat() {
        if (!probing.compareAndSet(false, true)) return;
        CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(Liveness.HEARTBEAT_DEADLINE.toNanos(), TimeUnit.NANOSECONDS)
                .withExecutor(MoreExecutors.directExecutor());
        try {
            ClientCalls.asyncUnaryCall(channel.newCall(IdentityGrpc.getProbeMethod(), options), ProbeRequest.getDefaultInstance(),
                    new StreamObserver<>() {
                        @Override
                        public void onNext(io.csi4j.proto.csi.ProbeResponse response) {
                            answered();
                        }

                        @Override
                        public void onError(Throwable t) {
                            Status status = Status.fromThrowable(t);
                            if (didNotAnswer(status)) {
                                problem = describeFailure(status.asRuntimeException());
                                // the next heartbeat redials at once: a returning agent is seen (and a superseded
                                // replica on it fenced) within a second, not after gRPC's backoff of up to 2 minutes
                                channels.resetConnectBackoff();
                            } else if (status.getCode() != Status.Code.CANCELLED) {
                                answered();  // an error it sent is an answer
                            }
                            probing.set(false);
                        }

                        @Override
                        public void onCompleted() {
                            probing.set(false);
                        }
                    });
        } catch (RuntimeException e) {
            probing.set(false);  // a channel shut down (closing)
        }
    }

    /** A call cut because the agent said nothing for too long: UNAVAILABLE naming the node and the silence. */
    private CsiException silence() {
        problem = "has not answered for " + silentFor().toSeconds() + " s";
        onSilence.run();
        return CsiException.unavailable(describe() + " has not answered for " + silentFor().toSeconds()
                + " s (a call waits at most " + Liveness.SILENCE.toSeconds() + " s of silence)");
    }

    /**
     * The call failed on the way, not in the agent: no answer, too late, or the connection died under it, which
     * grpc-java reports as UNKNOWN "channel closed" with the socket's IOException as the cause (grpc-java #7376,
     * #10120; a SIGKILLed agent shows it). An error the agent sent never carries a cause across the wire.
     */
    static boolean didNotAnswer(Status status) {
        return switch (status.getCode()) {
            case UNAVAILABLE, DEADLINE_EXCEEDED -> true;
            case UNKNOWN -> {
                for (Throwable t = status.getCause(); t != null; t = t.getCause()) {
                    if (t instanceof IOException) yield true;
                }
                yield false;
            }
            default -> false;
        };
    }

    CsiException translate(StatusRuntimeException e) {
        Status.Code code = e.getStatus().getCode();
        if (didNotAnswer(e.getStatus())) {
            channels.resetConnectBackoff();
            problem = describeFailure(e);
            onSilence.run();
            return CsiException.unavailable(describe() + " did not answer: " + problem);
        }
        if (code != Status.Code.CANCELLED) answered();  // an error it sent is an answer; a call we gave up on is not
        String message = e.getStatus().getDescription();
        return new CsiException(code, message == null ? code.name() : message);
    }

    public ControllerGrpc.ControllerBlockingStub controller() {
        return ControllerGrpc.newBlockingStub(channel).withDeadlineAfter(callTimeout);
    }

    public GroupControllerGrpc.GroupControllerBlockingStub groupController() {
        return GroupControllerGrpc.newBlockingStub(channel).withDeadlineAfter(callTimeout);
    }

    public io.csi4j.proto.addons.volumegroup.ControllerGrpc.ControllerBlockingStub volumeGroups() {
        return io.csi4j.proto.addons.volumegroup.ControllerGrpc.newBlockingStub(channel).withDeadlineAfter(callTimeout);
    }

    /** A stream's stub: the call deadline bounds the whole stream (and the CO's own deadline, when shorter). */
    public SnapshotMetadataGrpc.SnapshotMetadataBlockingStub snapshotMetadata() {
        return SnapshotMetadataGrpc.newBlockingStub(channel).withDeadlineAfter(callTimeout);
    }

    public NodeAgentGrpc.NodeAgentBlockingStub nodeAgent() {
        return NodeAgentGrpc.newBlockingStub(channel).withDeadlineAfter(callTimeout);
    }

    private static String describeFailure(StatusRuntimeException e) {
        String text = e.getStatus().getCode() + (e.getStatus().getDescription() == null ? "" : ": " + e.getStatus().getDescription());
        return e.getCause() == null || text.contains(String.valueOf(e.getCause().getMessage())) ? text
                : text + " (" + e.getCause().getMessage() + ")";
    }

    @Override
    public void close() {
        channel.shutdownNow();
        try {
            channels.closeLoopChannels();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return describe();
    }
}
