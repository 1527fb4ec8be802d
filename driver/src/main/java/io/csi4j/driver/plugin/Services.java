package io.csi4j.driver.plugin;

import static io.csi4j.driver.plugin.Services.Role.ANY;
import static io.csi4j.driver.plugin.Services.Role.CONTROLLER;
import static io.csi4j.driver.plugin.Services.Role.NODE;
import static io.csi4j.driver.plugin.Services.Socket.ADDONS;
import static io.csi4j.driver.plugin.Services.Socket.CSI;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.Version;
import io.csi4j.driver.addons.AddonsIdentityService;
import io.csi4j.driver.addons.AddonsStatus;
import io.csi4j.driver.addons.ReclaimSpaceControllerService;
import io.csi4j.driver.addons.ReclaimSpaceNodeService;
import io.csi4j.driver.addons.VolumeGroupService;
import io.csi4j.driver.addons.VolumeReplicationService;
import io.csi4j.driver.cluster.ClusterVolumeReplication;
import io.csi4j.driver.cluster.Agent;
import io.csi4j.driver.cluster.ClusterController;
import io.csi4j.driver.cluster.ClusterStatusService;
import io.csi4j.driver.cluster.ControllerRouter;
import io.csi4j.driver.cluster.GroupControllerRouter;
import io.csi4j.driver.cluster.ReclaimSpaceRouter;
import io.csi4j.driver.cluster.SnapshotMetadataRouter;
import io.csi4j.driver.cluster.VolumeGroupRouter;
import io.csi4j.driver.csi.ControllerService;
import io.csi4j.driver.csi.GroupControllerService;
import io.csi4j.driver.csi.IdentityService;
import io.csi4j.driver.csi.NodeService;
import io.csi4j.driver.csi.SnapshotMetadataService;
import io.csi4j.driver.csi.StorageStatus;
import io.csi4j.driver.engine.SpaceReclaimer;
import io.csi4j.driver.volume.OfflineReclaim;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import io.csi4j.proto.addons.identity.Capability;
import io.csi4j.proto.addons.identity.IdentityProto;
import io.csi4j.proto.addons.reclaimspace.ReclaimSpaceProto;
import io.csi4j.proto.addons.replication.ReplicationProto;
import io.csi4j.proto.addons.volumegroup.VolumeGroupProto;
import io.csi4j.proto.cluster.ClusterStatusProto;
import io.csi4j.proto.csi.CsiProto;
import io.grpc.BindableService;
import java.util.Objects;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Every CSI and CSI-Addons service csi4j serves, registered once, in {@link #ALL}. An entry says which gRPC service
 * it is, on which socket, which local process serves it (by its mode) and whether a node agent also serves it to the
 * cluster's controller, what the engine must offer for it, what it adds to the CSI-Addons identity's capabilities,
 * and how the cluster's controller serves it (its router). A local driver's sockets, a node agent's endpoint and the
 * cluster controller's sockets are all read from this table: adding a service is one entry (docs/design.md, "How to add a service").
 */
public final class Services {
    private Services() {}

    /** The socket a service is on: the CSI one, or the CSI-Addons one. */
    public enum Socket { CSI, ADDONS }

    /** Which local process serves a service, by its {@code --mode}: the controller, the node, or either. */
    enum Role {
        CONTROLLER, NODE, ANY;

        boolean servedIn(DriverConfig.Mode mode) {
            return switch (this) {
                case CONTROLLER -> mode.controller();
                case NODE -> mode.node();
                case ANY -> true;
            };
        }
    }

    /**
     * One service.
     *
     * @param grpc        the service as its .proto declares it (its methods name the calls a router forwards on the
     *                    transport thread)
     * @param local       builds it for a local driver; null: only the cluster's controller serves it
     * @param offered     whether a driver's engine offers what it needs
     * @param agentServes a node agent also serves it to the cluster's controller on its endpoint, whatever its mode
     * @param addons      what it adds to the CSI-Addons identity's capabilities where it is served
     * @param router      how the cluster's controller serves it; null: it does not
     * @param agentsOffer for a service an engine may lack: the agent capability that says an agent offers it (the
     *                    controller then lists the service's own capabilities); null: the controller always lists them
     * @param forwarded   the controller forwards each of its unary calls to one agent, on the transport thread
     *                    (listings, which merge every agent, and GetCapabilities stay on virtual threads)
     */
    record Entry(ServiceDescriptor grpc, Socket socket, Role role, Function<Driver, BindableService> local,
                 Predicate<Driver> offered, boolean agentServes, Function<DriverConfig, List<Capability>> addons,
                 Function<ClusterController, BindableService> router, Predicate<Capability> agentsOffer, boolean forwarded) {

        Entry onAgent() {
            return new Entry(grpc, socket, role, local, offered, true, addons, router, agentsOffer, forwarded);
        }

        /** Served where the engine offers it ({@code offered}); in a cluster, listed where an agent says {@code agentsOffer}. */
        Entry when(Predicate<Driver> offered, Predicate<Capability> agentsOffer) {
            return new Entry(grpc, socket, role, local, offered, agentServes, addons, router, agentsOffer, forwarded);
        }

        Entry addons(Function<DriverConfig, List<Capability>> addons) {
            return new Entry(grpc, socket, role, local, offered, agentServes, addons, router, agentsOffer, forwarded);
        }

        /** The cluster's controller serves it by {@code router}; {@code forwarded}: see {@link Entry}. */
        Entry routedBy(Function<ClusterController, BindableService> router, boolean forwarded) {
            return new Entry(grpc, socket, role, local, offered, agentServes, addons, router, agentsOffer, forwarded);
        }

        boolean servedBy(Driver driver) {
            return local != null && role.servedIn(driver.config().mode()) && offered.test(driver);
        }
    }

    /** The service {@code name} of {@code proto}, served on {@code socket} by {@code role}, built by {@code local}. */
    private static Entry service(FileDescriptor proto, String name, Socket socket, Role role, Function<Driver, BindableService> local) {
        ServiceDescriptor grpc = Objects.requireNonNull(proto.findServiceByName(name), () -> proto.getName() + " has no service " + name);
        return new Entry(grpc, socket, role, local, driver -> true, false, config -> List.of(), null, null, false);
    }

    /** The registration: one entry per service. */
    static final List<Entry> ALL = List.of(
            service(CsiProto.getDescriptor(), "Identity", CSI, ANY, Services::identity).onAgent()
                    .routedBy(Services::clusterIdentity, false),
            service(CsiProto.getDescriptor(), "SnapshotMetadata", CSI, ANY, d -> new SnapshotMetadataService(d.snapshotBlocks()))
                    .when(d -> d.snapshotBlocks().available(), null).onAgent()
                    .routedBy(c -> new SnapshotMetadataRouter(c.agents()), false),
            service(CsiProto.getDescriptor(), "Controller", CSI, CONTROLLER,
                    d -> new ControllerService(d.volumes(), d.snapshots(), d.pageTokens(), d.config().nodeId())).onAgent()
                    .routedBy(c -> new ControllerRouter(c.agents(), c.pageTokens(), c.failoverAfter()), true),
            service(CsiProto.getDescriptor(), "GroupController", CSI, CONTROLLER, d -> new GroupControllerService(d.groupSnapshots()))
                    .onAgent().routedBy(c -> new GroupControllerRouter(c.agents()), true),
            service(CsiProto.getDescriptor(), "Node", CSI, NODE,
                    d -> new NodeService(d.node(), d.config().nodeId(), d.config().maxVolumesPerNode(), d.config().topology())),
            service(ClusterStatusProto.getDescriptor(), "ClusterStatus", CSI, CONTROLLER, null)
                    .routedBy(c -> io.csi4j.driver.csi.StorageStatus.wrap(new ClusterStatusService(c.agents(), c.failoverAfter())), false),
            service(IdentityProto.getDescriptor(), "Identity", ADDONS, ANY, Services::addonsIdentity)
                    .onAgent().routedBy(Services::clusterAddonsIdentity, false),
            service(VolumeGroupProto.getDescriptor(), "Controller", ADDONS, CONTROLLER,
                    d -> new VolumeGroupService(d.volumeGroups(), d.pageTokens())).addons(AddonsIdentityService::volumeGroups)
                    .onAgent().routedBy(c -> new VolumeGroupRouter(c.agents(), c.pageTokens()), true),
            service(ReclaimSpaceProto.getDescriptor(), "ReclaimSpaceController", ADDONS, CONTROLLER,
                    d -> new ReclaimSpaceControllerService(new OfflineReclaim(d.volumes(), d.engine())))
                    .when(d -> d.engine().capability(SpaceReclaimer.class).isPresent(), Capability::hasReclaimSpace)
                    .addons(config -> List.of(AddonsIdentityService.reclaimSpace(Capability.ReclaimSpace.Type.OFFLINE)))
                    .onAgent().routedBy(c -> new ReclaimSpaceRouter(c.agents()), true),
            // only the cluster's controller: a lone plugin (or an agent) holds no replica set to promote or demote
            service(ReplicationProto.getDescriptor(), "Controller", ADDONS, CONTROLLER, null)
                    .addons(config -> List.of(AddonsIdentityService.volumeReplication(Capability.VolumeReplication.Type.VOLUME_REPLICATION)))
                    .routedBy(c -> AddonsStatus.wrap(new VolumeReplicationService(new ClusterVolumeReplication(c.agents(), c.failoverAfter()))),
                            false),
            service(ReclaimSpaceProto.getDescriptor(), "ReclaimSpaceNode", ADDONS, NODE, d -> new ReclaimSpaceNodeService(d.node()))
                    .when(d -> d.engine().capability(SpaceReclaimer.class).isPresent(), Capability::hasReclaimSpace)
                    .addons(config -> List.of(AddonsIdentityService.service(Capability.Service.Type.NODE_SERVICE),
                            AddonsIdentityService.reclaimSpace(Capability.ReclaimSpace.Type.ONLINE))));

    /** What {@code driver} serves on {@code socket} in its mode; storage errors become statuses as everywhere. */
    static List<BindableService> served(Driver driver, Socket socket) {
        return wrapped(driver, e -> e.socket() == socket && e.servedBy(driver));
    }

    /**
     * What a node agent serves to the cluster's controller (besides csi4j's NodeAgent, which the driver adds): the
     * services marked {@code agentServes} that its engine offers, whatever its mode.
     */
    static List<BindableService> onAgent(Driver driver) {
        return wrapped(driver, e -> e.agentServes() && e.offered().test(driver));
    }

    private static List<BindableService> wrapped(Driver driver, Predicate<Entry> which) {
        var services = new ArrayList<BindableService>();
        for (Entry e : ALL) if (which.test(e)) services.add(wrap(e.socket(), e.local().apply(driver)));
        return services;
    }

    /** Each edge maps the domain's errors to its own codes: CSI's on the CSI socket, CSI-Addons' on the add-ons socket. */
    private static BindableService wrap(Socket socket, BindableService service) {
        return switch (socket) {
            case CSI -> StorageStatus.wrap(service);
            case ADDONS -> AddonsStatus.wrap(service);
        };
    }

    /** What the cluster's {@code controller} serves on {@code socket}: the routers. */
    public static List<BindableService> cluster(ClusterController controller, Socket socket) {
        return ALL.stream().filter(e -> e.socket() == socket && e.router() != null).map(e -> e.router().apply(controller)).toList();
    }

    /**
     * The calls the cluster's routers answer on the transport thread (for {@code PluginServer.Builder.onTransportThread}):
     * those that go to one agent, forwarded asynchronously; a branch that has to wait moves to a virtual thread itself
     * ({@code TransportThread}). Listings, Identity, status and streams run on virtual threads as usual.
     */
    public static Set<String> onTransportThread() {
        return ALL.stream().filter(Entry::forwarded).flatMap(e -> e.grpc().getMethods().stream())
                .filter(m -> !m.isClientStreaming() && !m.isServerStreaming())
                .filter(m -> !m.getName().startsWith("List") && !m.getName().endsWith("GetCapabilities"))
                .map(Services::fullName).collect(Collectors.toUnmodifiableSet());
    }

    private static String fullName(MethodDescriptor method) {
        return method.getService().getFullName() + "/" + method.getName();
    }

    /** csi.v1 Identity: SNAPSHOT_METADATA_SERVICE is advertised exactly when it is served (image engine). */
    private static IdentityService identity(Driver d) {
        return new IdentityService(DriverConfig.PLUGIN_NAME, Version.current(), d.manifest(), d::ready, d.snapshotBlocks().available());
    }

    /** CSI-Addons identity: the capabilities of the CSI-Addons services this driver serves in its mode. */
    private static AddonsIdentityService addonsIdentity(Driver d) {
        var capabilities = ALL.stream().filter(e -> e.socket() == ADDONS && e.servedBy(d))
                .flatMap(e -> e.addons().apply(d.config()).stream()).toList();
        return new AddonsIdentityService(DriverConfig.PLUGIN_NAME, Version.current(), d.manifest(),
                AddonsIdentityService.listing(capabilities), d::ready);
    }

    private static IdentityService clusterIdentity(ClusterController c) {
        return new IdentityService(DriverConfig.PLUGIN_NAME, Version.current(), c.manifest(), c.agents()::ready,
                () -> c.agents().nodes().stream().anyMatch(Agent::servesSnapshotMetadata));
    }

    /** The controller lists what it routes: a service an engine may lack while some agent says it offers it. */
    private static AddonsIdentityService clusterAddonsIdentity(ClusterController c) {
        return new AddonsIdentityService(DriverConfig.PLUGIN_NAME, Version.current(), c.manifest(),
                () -> AddonsIdentityService.listing(ALL.stream()
                        .filter(e -> e.socket() == ADDONS && e.router() != null)
                        .filter(e -> e.agentsOffer() == null || c.agents().nodes().stream().anyMatch(a -> a.advertises(e.agentsOffer())))
                        .flatMap(e -> e.addons().apply(c.addonsSemantics()).stream()).toList()),
                c.agents()::ready);
    }
}
