package io.csi4j.driver.cluster;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.Version;
import io.csi4j.driver.addons.AddonsIdentityService;
import io.csi4j.driver.csi.IdentityService;
import io.csi4j.proto.addons.identity.Capability;
import io.csi4j.proto.addons.reclaimspace.ReclaimSpaceControllerGrpc;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.GroupControllerGrpc;
import io.csi4j.sdk.server.MutualTls;
import io.csi4j.sdk.server.PluginServer;
import io.grpc.BindableService;
import io.grpc.MethodDescriptor;
import io.netty.channel.EventLoopGroup;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

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
    private final EventLoopGroup eventLoops = PluginServer.eventLoops();

    public ClusterController(Config config) {
        this.config = config;
        this.agents = new Agents(config.agents(), config.tls(), config.callTimeout(), config.refreshEvery());
        this.tokens = config.pageTokenKey() == null ? ClusterPageToken.withRandomKey() : new ClusterPageToken(config.pageTokenKey());
    }

    /** Identity, Controller, GroupController and csi4j's ClusterStatus, for the controller's CSI socket. */
    public List<BindableService> csiServices() {
        return List.of(new IdentityService(DriverConfig.PLUGIN_NAME, Version.current(), manifest(), agents::ready,
                        () -> agents.nodes().stream().anyMatch(Agent::servesSnapshotMetadata)),
                new ControllerRouter(agents, tokens), new GroupControllerRouter(agents), new SnapshotMetadataRouter(agents),
                new ClusterStatusService(agents));
    }

    /** CSI-Addons identity and volume groups, for the controller's CSI-Addons socket. */
    public List<BindableService> addonsServices() {
        var base = AddonsIdentityService.capabilities(config.addonsSemantics());
        var withReclaim = base.toBuilder().addCapabilities(AddonsIdentityService.reclaimSpace(
                Capability.ReclaimSpace.Type.OFFLINE)).build();
        return List.of(new AddonsIdentityService(DriverConfig.PLUGIN_NAME, Version.current(), manifest(),
                        () -> agents.nodes().stream().anyMatch(Agent::reclaimsSpace) ? withReclaim : base, agents::ready),
                new VolumeGroupRouter(agents, tokens), new ReclaimSpaceRouter(agents));
    }

    /**
     * The calls the routers answer on the transport thread (for {@code PluginServer.Builder.onTransportThread}): those
     * that go to one agent, forwarded asynchronously; a branch that has to wait moves to a virtual thread itself
     * ({@link TransportThread}). Listings, Identity, status and streams run on virtual threads as usual.
     */
    public static Set<String> onTransportThread() {
        return Stream.of(
                ControllerGrpc.getCreateVolumeMethod(),
                ControllerGrpc.getDeleteVolumeMethod(),
                ControllerGrpc.getControllerPublishVolumeMethod(),
                ControllerGrpc.getControllerUnpublishVolumeMethod(),
                ControllerGrpc.getValidateVolumeCapabilitiesMethod(),
                ControllerGrpc.getControllerGetVolumeMethod(),
                ControllerGrpc.getControllerModifyVolumeMethod(),
                ControllerGrpc.getControllerExpandVolumeMethod(),
                ControllerGrpc.getGetCapacityMethod(),
                ControllerGrpc.getCreateSnapshotMethod(),
                ControllerGrpc.getDeleteSnapshotMethod(),
                ControllerGrpc.getGetSnapshotMethod(),
                GroupControllerGrpc.getCreateVolumeGroupSnapshotMethod(),
                GroupControllerGrpc.getDeleteVolumeGroupSnapshotMethod(),
                GroupControllerGrpc.getGetVolumeGroupSnapshotMethod(),
                // qualified: CSI-Addons' volumegroup.ControllerGrpc shares its simple name with csi.v1's
                io.csi4j.proto.addons.volumegroup.ControllerGrpc.getCreateVolumeGroupMethod(),
                io.csi4j.proto.addons.volumegroup.ControllerGrpc.getModifyVolumeGroupMembershipMethod(),
                io.csi4j.proto.addons.volumegroup.ControllerGrpc.getDeleteVolumeGroupMethod(),
                io.csi4j.proto.addons.volumegroup.ControllerGrpc.getControllerGetVolumeGroupMethod(),
                ReclaimSpaceControllerGrpc.getControllerReclaimSpaceMethod())
                .map(MethodDescriptor::getFullMethodName).collect(Collectors.toUnmodifiableSet());
    }

    /** The event loops the controller's server must run on ({@code PluginServer.Builder.eventLoops}). */
    public EventLoopGroup eventLoops() {
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
        return "csi4j %s cluster controller serving %s on %s: agents=%s nodes=%s%s".formatted(Version.current(),
                DriverConfig.PLUGIN_NAME, endpoint, manifest().get("agents"),
                agents.nodes().stream().map(Agent::nodeId).toList(),
                agents.unidentified().isEmpty() ? "" : " not answering=" + agents.unidentified().stream().map(Agent::address).toList());
    }

    @Override
    public void close() {
        agents.close();
        eventLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
