package io.csi4j.testkit.suite;

import io.csi4j.proto.csi.ControllerGetCapabilitiesRequest;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.ControllerServiceCapability;
import io.csi4j.proto.csi.GetPluginCapabilitiesRequest;
import io.csi4j.proto.csi.GroupControllerGetCapabilitiesRequest;
import io.csi4j.proto.csi.GroupControllerGrpc;
import io.csi4j.proto.csi.GroupControllerServiceCapability;
import io.csi4j.proto.csi.IdentityGrpc;
import io.csi4j.proto.csi.NodeGetCapabilitiesRequest;
import io.csi4j.proto.csi.NodeGetInfoRequest;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.proto.csi.NodeServiceCapability;
import io.csi4j.proto.csi.PluginCapability;
import io.csi4j.proto.csi.ProbeRequest;
import io.csi4j.proto.csi.ProbeResponse;
import io.csi4j.testkit.Outcome;
import io.csi4j.testkit.SanityConfig;
import io.csi4j.testkit.TestResult;
import io.csi4j.testkit.connect.CallLog;
import io.csi4j.testkit.connect.PluginConnection;
import io.csi4j.testkit.connect.SentRequest;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import io.csi4j.proto.addons.identity.Capability;
import io.csi4j.proto.addons.identity.GetCapabilitiesRequest;
import io.csi4j.proto.csi.SnapshotMetadataGrpc;
import io.csi4j.proto.csi.Topology;
import io.grpc.Status;

/**
 * One connection to the plugin under test and what was learned from it at the start (capabilities,
 * node id). Runs single tests; every test gets its own {@link TestContext} and cleanup.
 */
public final class Session implements AutoCloseable {

    /** The plugin could not be reached or did not say what it can do: no test can be planned. */
    public static final class DiscoveryFailure extends Exception {
        public DiscoveryFailure(String message) {
            super(message, null, false, false);
        }
    }

    private final SanityConfig config;
    private final CallLog calls = new CallLog();
    private volatile PluginConnection csi;
    private volatile PluginConnection addons;
    private StoppedAnswering stopped;
    /** The node plugin of a split deployment; null when {@link #csi} serves Node too. */
    private volatile PluginConnection nodePlugin;
    private Optional<Topology> nodeTopology = Optional.empty();
    private final String runId = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt()).substring(0, 6);
    private final AtomicInteger sequence = new AtomicInteger();
    private final List<Path> ownedDirs = new ArrayList<>();
    private Path stagingRoot;
    private Path targetRoot;
    private Capabilities caps;
    private Optional<String> nodeId = Optional.empty();
    private String nodeIdProblem = "NodeGetInfo was not called";

    private Session(SanityConfig config) {
        this.config = config;
        this.csi = PluginConnection.open(config.endpoint(), calls.interceptor(config.endpoint()));
        this.addons = config.addonsEndpoint().map(a -> PluginConnection.open(a, calls.interceptor(a))).orElse(null);
        this.nodePlugin = config.nodeEndpoint().map(n -> PluginConnection.open(n, calls.interceptor(n))).orElse(null);
    }

    /** Connects, waits until Probe says ready, and asks the plugin for its capabilities and node id. */
    public static Session open(SanityConfig config) throws DiscoveryFailure {
        Session session;
        try {
            session = new Session(config);
        } catch (IllegalArgumentException e) {
            throw new DiscoveryFailure("bad endpoint: " + e.getMessage());
        }
        try {
            session.discover();
            session.prepareDirs();
            return session;
        } catch (DiscoveryFailure | RuntimeException e) {
            session.close();
            throw e;
        }
    }

    private void discover() throws DiscoveryFailure {
        waitUntilReady();
        Set<PluginCapability.Service.Type> plugin = EnumSet.noneOf(PluginCapability.Service.Type.class);
        Set<PluginCapability.VolumeExpansion.Type> expansion = EnumSet.noneOf(PluginCapability.VolumeExpansion.Type.class);
        try {
            for (PluginCapability c : identity().getPluginCapabilities(GetPluginCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList()) {
                switch (c.getTypeCase()) {
                    case SERVICE -> plugin.add(c.getService().getType());
                    case VOLUME_EXPANSION -> expansion.add(c.getVolumeExpansion().getType());
                    default -> { }
                }
            }
        } catch (StatusRuntimeException e) {
            throw new DiscoveryFailure("GetPluginCapabilities failed at " + csi + ": " + Verdicts.describe(e));
        }
        Set<NodeServiceCapability.RPC.Type> node = EnumSet.noneOf(NodeServiceCapability.RPC.Type.class);
        try {
            for (NodeServiceCapability c : node().nodeGetCapabilities(NodeGetCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList()) {
                if (c.hasRpc()) node.add(c.getRpc().getType());
            }
        } catch (StatusRuntimeException e) {
            throw new DiscoveryFailure("NodeGetCapabilities failed at " + csi + ": " + Verdicts.describe(e));
        }
        // Controller and group capabilities that cannot be read leave their sets empty; the
        // capability tests of those services then report the failure itself.
        Set<ControllerServiceCapability.RPC.Type> controller = EnumSet.noneOf(ControllerServiceCapability.RPC.Type.class);
        if (plugin.contains(PluginCapability.Service.Type.CONTROLLER_SERVICE)) {
            try {
                for (ControllerServiceCapability c : controller().controllerGetCapabilities(ControllerGetCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList()) {
                    if (c.hasRpc()) controller.add(c.getRpc().getType());
                }
            } catch (StatusRuntimeException ignored) {
                // reported by Controller/ControllerGetCapabilities
            }
        }
        Set<GroupControllerServiceCapability.RPC.Type> group = EnumSet.noneOf(GroupControllerServiceCapability.RPC.Type.class);
        if (plugin.contains(PluginCapability.Service.Type.GROUP_CONTROLLER_SERVICE)) {
            try {
                for (GroupControllerServiceCapability c : groupController().groupControllerGetCapabilities(GroupControllerGetCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList()) {
                    if (c.hasRpc()) group.add(c.getRpc().getType());
                }
            } catch (StatusRuntimeException ignored) {
                // reported by GroupController/GroupControllerGetCapabilities
            }
        }
        var addonsServices = EnumSet.noneOf(Capability.Service.Type.class);
        var volumeGroup = EnumSet.noneOf(Capability.VolumeGroup.Type.class);
        if (addons != null) {
            try {
                var answer = addonsIdentity().getCapabilities(GetCapabilitiesRequest.getDefaultInstance());
                for (var c : answer.getCapabilitiesList()) {
                    switch (c.getTypeCase()) {
                        case SERVICE -> addonsServices.add(c.getService().getType());
                        case VOLUME_GROUP -> volumeGroup.add(c.getVolumeGroup().getType());
                        default -> { }
                    }
                }
            } catch (StatusRuntimeException ignored) {
                // reported by Addons/Identity/GetCapabilities
            }
        }
        caps = new Capabilities(plugin, expansion, controller, node, group, addons != null, addonsServices, volumeGroup);
        try {
            var info = node().nodeGetInfo(NodeGetInfoRequest.getDefaultInstance());
            String id = info.getNodeId();
            if (id.isEmpty()) nodeIdProblem = "NodeGetInfo returned an empty node_id";
            else nodeId = Optional.of(id);
            if (info.hasAccessibleTopology() && info.getAccessibleTopology().getSegmentsCount() > 0) {
                nodeTopology = Optional.of(info.getAccessibleTopology());
            }
        } catch (StatusRuntimeException e) {
            nodeIdProblem = "NodeGetInfo failed: " + Verdicts.describe(e);
        }
    }

    /** Probe may answer ready=false while the plugin initializes: poll until ready, within one call timeout. */
    private void waitUntilReady() throws DiscoveryFailure {
        long deadline = System.nanoTime() + config.callTimeout().toNanos();
        String last;
        while (true) {
            csi.channel().resetConnectBackoff(); // a plugin that just came back is tried at once, not after gRPC's backoff
            try {
                ProbeResponse answer = identity().probe(ProbeRequest.getDefaultInstance());
                if (!answer.hasReady() || answer.getReady().getValue()) return;
                last = "Probe answered ready=false";
            } catch (StatusRuntimeException e) {
                last = "Probe failed: " + Verdicts.describe(e);
                if (e.getStatus().getCode() != Status.Code.UNAVAILABLE) {
                    throw new DiscoveryFailure(last + " at " + csi);
                }
            }
            if (System.nanoTime() > deadline) throw new DiscoveryFailure(last + " at " + csi + " for " + config.callTimeout().toSeconds() + " s");
            try {
                TimeUnit.MILLISECONDS.sleep(250);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new DiscoveryFailure("interrupted while waiting for the plugin to become ready");
            }
        }
    }

    private void prepareDirs() throws DiscoveryFailure {
        try {
            Path temp = null;
            if (config.stagingDir().isEmpty() || config.targetDir().isEmpty()) {
                temp = Files.createTempDirectory("csi4j-sanity-");
                ownedDirs.add(temp);
            }
            stagingRoot = config.stagingDir().isPresent() ? config.stagingDir().get() : owned(temp.resolve("staging"));
            targetRoot = config.targetDir().isPresent() ? config.targetDir().get() : owned(temp.resolve("target"));
            Files.createDirectories(stagingRoot);
            Files.createDirectories(targetRoot);
        } catch (IOException e) {
            throw new DiscoveryFailure("cannot prepare node directories: " + e);
        }
    }

    private Path owned(Path dir) throws IOException {
        Files.createDirectories(dir);
        ownedDirs.add(dir);
        return dir;
    }

    public SanityConfig config() { return config; }
    public Capabilities capabilities() { return caps; }
    public String runId() { return runId; }
    public Path stagingRoot() { return stagingRoot; }
    public Path targetRoot() { return targetRoot; }

    /** The node id from NodeGetInfo; a test that needs it fails when the plugin did not give one. */
    public String nodeId() {
        return nodeId.orElseThrow(() -> new SpecViolation("NodeGetInfo MUST return a node_id", nodeIdProblem));
    }

    /**
     * With a separate node endpoint: the node's topology, which every volume the suite creates asks for (preferred
     * and requisite), so that the node under test can stage it. Empty for a plugin on one endpoint.
     */
    public Optional<Topology> placementTopology() {
        return nodePlugin == null ? Optional.empty() : nodeTopology;
    }

    /** A fresh name for an object this run creates: short, unique, recognisable in a plugin's listing. */
    public String nextName(String what) {
        return "sanity-" + runId + "-" + sequence.incrementAndGet() + "-" + what;
    }

    private Duration timeout() {
        return config.callTimeout();
    }

    private ManagedChannel channel() { return csi.channel(); }

    public IdentityGrpc.IdentityBlockingStub identity() {
        return IdentityGrpc.newBlockingStub(channel()).withDeadlineAfter(timeout());
    }

    public ControllerGrpc.ControllerBlockingStub controller() {
        return ControllerGrpc.newBlockingStub(channel()).withDeadlineAfter(timeout());
    }

    public NodeGrpc.NodeBlockingStub node() {
        return NodeGrpc.newBlockingStub(nodePlugin != null ? nodePlugin.channel() : channel()).withDeadlineAfter(timeout());
    }

    public GroupControllerGrpc.GroupControllerBlockingStub groupController() {
        return GroupControllerGrpc.newBlockingStub(channel()).withDeadlineAfter(timeout());
    }

    public SnapshotMetadataGrpc.SnapshotMetadataBlockingStub snapshotMetadata() {
        return SnapshotMetadataGrpc.newBlockingStub(channel()).withDeadlineAfter(timeout());
    }

    public io.csi4j.proto.addons.identity.IdentityGrpc.IdentityBlockingStub addonsIdentity() {
        return io.csi4j.proto.addons.identity.IdentityGrpc.newBlockingStub(addonsChannel()).withDeadlineAfter(timeout());
    }

    public io.csi4j.proto.addons.volumegroup.ControllerGrpc.ControllerBlockingStub volumeGroups() {
        return io.csi4j.proto.addons.volumegroup.ControllerGrpc.newBlockingStub(addonsChannel()).withDeadlineAfter(timeout());
    }

    private ManagedChannel addonsChannel() {
        if (addons == null) throw new NotApplicable("no addons endpoint given");
        return addons.channel();
    }

    /**
     * Runs one test: plan check, body, then the test's cleanup, which runs whatever the body did. A failure
     * names the request that shows it; a plugin that stopped answering is noted ({@link #takeStoppedAnswering()})
     * and its cleanup is not attempted (every step would only fail again).
     */
    public TestResult run(SanityTest test) {
        long start = System.nanoTime();
        List<String> unmet = test.requirement().unmet(caps, config);
        if (!unmet.isEmpty()) {
            return new TestResult(test.name(), Outcome.NOT_APPLICABLE, Duration.ofNanos(System.nanoTime() - start),
                    "needs " + String.join(" and ", unmet));
        }
        calls.reset();
        CallLog.forgetThisThread();
        TestContext ctx = new TestContext(this, test.name());
        Outcome outcome;
        String message;
        try {
            test.body().run(ctx);
            outcome = Outcome.PASSED;
            message = "";
        } catch (NotApplicable e) {
            outcome = Outcome.NOT_APPLICABLE;
            message = e.getMessage();
        } catch (SpecViolation e) {
            outcome = Outcome.FAILED;
            message = e.getMessage() + e.request().map(r -> replay(r, e.requestAnswered() ? "request: " : "last request: ")).orElse("");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            outcome = Outcome.FAILED;
            message = "interrupted";
        } catch (Throwable t) {
            outcome = Outcome.FAILED;
            message = "unexpected " + Verdicts.describe(t) + CallLog.lastOnThisThread().map(r -> replay(r, "last request: ")).orElse("");
        }
        stopped = stoppedAnswering(test.name()).orElse(null);
        if (stopped != null) {
            // every cleanup call would fail UNAVAILABLE again: say once what is left instead
            String left = ctx.cleanup().pendingSteps();
            if (!left.isEmpty()) message = message + "\ncleanup not attempted, the plugin stopped answering; left behind: " + left;
        } else {
            List<String> leftovers = ctx.cleanup().runAll();
            stopped = stoppedAnswering(test.name()).orElse(null);
            if (!leftovers.isEmpty()) {
                String text = "cleanup failed: " + String.join("; ", leftovers);
                if (outcome == Outcome.FAILED) {
                    message = message + "\n" + text;
                } else {
                    outcome = Outcome.FAILED;
                    message = text;
                }
            }
        }
        if (stopped != null && outcome != Outcome.FAILED) {
            outcome = Outcome.FAILED; // e.g. the plugin died during cleanup of a test that had passed
            message = "the plugin stopped answering during " + stopped.request().describe();
        }
        return new TestResult(test.name(), outcome, Duration.ofNanos(System.nanoTime() - start), scrubSecrets(message));
    }

    private String replay(SentRequest request, String label) {
        return "\n" + label + request.describe() + "\nreplay: " + request.commandLine();
    }

    /** A plugin may quote a request's secrets in its error message: no secret value reaches the report. */
    private String scrubSecrets(String message) {
        String out = message;
        for (String value : config.secrets().values()) {
            if (value.length() >= 3) out = out.replace(value, SentRequest.MASK);
        }
        return out;
    }

    /**
     * Whether the plugin went away in the last test: one of its calls ended UNAVAILABLE or CANCELLED, and a Probe of the same
     * endpoint right after it cannot reach the plugin either. A plugin that answers UNAVAILABLE on purpose, or
     * that a supervisor brought back already, still answers the Probe.
     */
    private Optional<StoppedAnswering> stoppedAnswering(String testName) {
        var lost = calls.firstUnavailable();
        if (lost.isEmpty()) return Optional.empty();
        SentRequest request = lost.get().request();
        boolean addonsCall = addons != null && request.endpoint().equals(config.addonsEndpoint().orElse(null))
                && !request.endpoint().equals(config.endpoint());
        try {
            long seconds = Math.min(config.callTimeout().toSeconds(), 10);
            if (addonsCall) {
                io.csi4j.proto.addons.identity.IdentityGrpc.newBlockingStub(addons.channel()).withDeadlineAfter(Math.max(seconds, 1), TimeUnit.SECONDS)
                        .probe(io.csi4j.proto.addons.identity.ProbeRequest.getDefaultInstance());
            } else {
                IdentityGrpc.newBlockingStub(csi.channel()).withDeadlineAfter(Math.max(seconds, 1), TimeUnit.SECONDS)
                        .probe(ProbeRequest.getDefaultInstance());
            }
            calls.reset();
            return Optional.empty();
        } catch (StatusRuntimeException e) {
            calls.reset();
            if (e.getStatus().getCode() != Status.Code.UNAVAILABLE) return Optional.empty();
            return Optional.of(new StoppedAnswering(testName, request, Verdicts.describe(lost.get().status().asRuntimeException()),
                    Verdicts.describe(e)));
        }
    }

    /** The plugin stopped answering in the test just run (once: the note is cleared). */
    public Optional<StoppedAnswering> takeStoppedAnswering() {
        StoppedAnswering s = stopped;
        stopped = null;
        return Optional.ofNullable(s);
    }

    /**
     * For {@code --keep-going}: new connections, and Probe until the plugin is ready again, within one call
     * timeout. False when it did not come back.
     */
    public boolean reconnect() {
        PluginConnection oldCsi = csi;
        PluginConnection oldAddons = addons;
        csi = PluginConnection.open(config.endpoint(), calls.interceptor(config.endpoint()));
        if (oldAddons != null) {
            String a = config.addonsEndpoint().orElseThrow();
            addons = PluginConnection.open(a, calls.interceptor(a));
        }
        PluginConnection oldNode = nodePlugin;
        if (oldNode != null) {
            String n = config.nodeEndpoint().orElseThrow();
            nodePlugin = PluginConnection.open(n, calls.interceptor(n));
        }
        oldCsi.close();
        if (oldAddons != null) oldAddons.close();
        if (oldNode != null) oldNode.close();
        try {
            waitUntilReady();
            if (addons != null) addons.channel().resetConnectBackoff();
            calls.reset();
            return true;
        } catch (DiscoveryFailure e) {
            return false;
        }
    }

    @Override
    public void close() {
        try {
            csi.close();
        } finally {
            if (addons != null) addons.close();
            if (nodePlugin != null) nodePlugin.close();
            for (Path dir : ownedDirs.reversed()) {
                try {
                    Files.deleteIfExists(dir); // only when empty: never recurse into what a plugin may have mounted
                } catch (IOException ignored) {
                    // a non-empty leftover is a plugin's leak, already reported by the test that made it
                }
            }
        }
    }
}
