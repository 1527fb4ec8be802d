package io.csi4j.driver.cluster;

import io.csi4j.driver.Driver;
import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.addons.AddonsIdentityService;
import io.csi4j.driver.csi.IdentityService;
import io.csi4j.sdk.server.MutualTls;
import io.grpc.BindableService;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The composition root of {@code csi4j serve --mode controller}: a stateless router in front of the node
 * agents. It holds no catalog and no pool; what it knows is which agent serves which node.
 */
public final class ClusterController implements AutoCloseable {
    /** How the controller reaches its agents. {@code pageTokenKey} null: a random key (tokens die with the process). */
    public record Config(List<Agents.Entry> agents, MutualTls tls, byte[] pageTokenKey, Duration callTimeout,
                         Duration refreshEvery, DriverConfig addonsSemantics) {
        public Config {
            agents = List.copyOf(agents);
            if (agents.isEmpty()) throw new IllegalArgumentException("a controller needs at least one agent (--nodes)");
        }
    }

    private final Config config;
    private final Agents agents;
    private final ClusterPageToken tokens;
    /** The server's event loops, shared with the agents' per-loop channels ({@link LoopChannels}); closed after the agents. */
    private final io.netty.channel.EventLoopGroup eventLoops = io.csi4j.sdk.server.PluginServer.eventLoops();

    public ClusterController(Config config) {
        this.config = config;
        this.agents = new Agents(config.agents(), config.tls(), config.callTimeout(), config.refreshEvery());
        this.tokens = config.pageTokenKey() == null ? ClusterPageToken.withRandomKey() : new ClusterPageToken(config.pageTokenKey());
    }

    /** Identity, Controller, GroupController and csi4j's ClusterStatus, for the controller's CSI socket. */
    public List<BindableService> csiServices() {
        return List.of(new IdentityService(DriverConfig.PLUGIN_NAME, Driver.version(), manifest(), agents::ready,
                        () -> agents.nodes().stream().anyMatch(Agent::servesSnapshotMetadata)),
                new ControllerRouter(agents, tokens), new GroupControllerRouter(agents), new SnapshotMetadataRouter(agents),
                new ClusterStatusService(agents));
    }

    /** CSI-Addons identity and volume groups, for the controller's CSI-Addons socket. */
    public List<BindableService> addonsServices() {
        var base = AddonsIdentityService.capabilities(config.addonsSemantics());
        var withReclaim = base.toBuilder().addCapabilities(AddonsIdentityService.reclaimSpace(
                io.csi4j.proto.addons.identity.Capability.ReclaimSpace.Type.OFFLINE)).build();
        return List.of(new AddonsIdentityService(DriverConfig.PLUGIN_NAME, Driver.version(), manifest(),
                        () -> agents.nodes().stream().anyMatch(Agent::reclaimsSpace) ? withReclaim : base, agents::ready),
                new VolumeGroupRouter(agents, tokens), new ReclaimSpaceRouter(agents));
    }

    /**
     * The calls the routers answer on the transport thread (for {@code PluginServer.Builder.onTransportThread}): those
     * that go to one agent, forwarded asynchronously; a branch that has to wait moves to a virtual thread itself
     * ({@link TransportThread}). Listings, Identity, status and streams run on virtual threads as usual.
     */
    public static java.util.Set<String> onTransportThread() {
        return java.util.stream.Stream.of(
                io.csi4j.proto.csi.ControllerGrpc.getCreateVolumeMethod(),
                io.csi4j.proto.csi.ControllerGrpc.getDeleteVolumeMethod(),
                io.csi4j.proto.csi.ControllerGrpc.getControllerPublishVolumeMethod(),
                io.csi4j.proto.csi.ControllerGrpc.getControllerUnpublishVolumeMethod(),
                io.csi4j.proto.csi.ControllerGrpc.getValidateVolumeCapabilitiesMethod(),
                io.csi4j.proto.csi.ControllerGrpc.getControllerGetVolumeMethod(),
                io.csi4j.proto.csi.ControllerGrpc.getControllerModifyVolumeMethod(),
                io.csi4j.proto.csi.ControllerGrpc.getControllerExpandVolumeMethod(),
                io.csi4j.proto.csi.ControllerGrpc.getGetCapacityMethod(),
                io.csi4j.proto.csi.ControllerGrpc.getCreateSnapshotMethod(),
                io.csi4j.proto.csi.ControllerGrpc.getDeleteSnapshotMethod(),
                io.csi4j.proto.csi.ControllerGrpc.getGetSnapshotMethod(),
                io.csi4j.proto.csi.GroupControllerGrpc.getCreateVolumeGroupSnapshotMethod(),
                io.csi4j.proto.csi.GroupControllerGrpc.getDeleteVolumeGroupSnapshotMethod(),
                io.csi4j.proto.csi.GroupControllerGrpc.getGetVolumeGroupSnapshotMethod(),
                io.csi4j.proto.addons.volumegroup.ControllerGrpc.getCreateVolumeGroupMethod(),
                io.csi4j.proto.addons.volumegroup.ControllerGrpc.getModifyVolumeGroupMembershipMethod(),
                io.csi4j.proto.addons.volumegroup.ControllerGrpc.getDeleteVolumeGroupMethod(),
                io.csi4j.proto.addons.volumegroup.ControllerGrpc.getControllerGetVolumeGroupMethod(),
                io.csi4j.proto.addons.reclaimspace.ReclaimSpaceControllerGrpc.getControllerReclaimSpaceMethod())
                .map(io.grpc.MethodDescriptor::getFullMethodName).collect(java.util.stream.Collectors.toUnmodifiableSet());
    }

    /** The event loops the controller's server must run on ({@code PluginServer.Builder.eventLoops}). */
    public io.netty.channel.EventLoopGroup eventLoops() {
        return eventLoops;
    }

    public Agents agents() {
        return agents;
    }

    private Map<String, String> manifest() {
        var manifest = new LinkedHashMap<String, String>();
        manifest.put("role", "controller");
        manifest.put("agents", String.join(",", config.agents().stream().map(e -> e.host() + ":" + e.port()).toList()));
        return manifest;
    }

    /** The one line printed at start-up. */
    public String describe(String endpoint) {
        return "csi4j %s cluster controller serving %s on %s: agents=%s nodes=%s%s".formatted(Driver.version(),
                DriverConfig.PLUGIN_NAME, endpoint, manifest().get("agents"),
                agents.nodes().stream().map(Agent::nodeId).toList(),
                agents.unidentified().isEmpty() ? "" : " not answering=" + agents.unidentified().stream().map(Agent::address).toList());
    }

    @Override
    public void close() {
        agents.close();
        eventLoops.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).awaitUninterruptibly(5, java.util.concurrent.TimeUnit.SECONDS);
    }
}
