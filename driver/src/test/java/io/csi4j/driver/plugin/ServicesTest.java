package io.csi4j.driver.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.addons.AddonsIdentityService;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.mobility.Bandwidth;
import io.csi4j.proto.addons.identity.Capability;
import io.grpc.BindableService;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The service table serves, routes and advertises what the hand-written lists did before it. */
class ServicesTest {
    /** What ClusterController.onTransportThread() listed by hand before the table derived it from the forwarded services. */
    private static final Set<String> FORWARDED_BEFORE = Set.of(
            "csi.v1.Controller/CreateVolume", "csi.v1.Controller/DeleteVolume", "csi.v1.Controller/ControllerPublishVolume",
            "csi.v1.Controller/ControllerUnpublishVolume", "csi.v1.Controller/ValidateVolumeCapabilities",
            "csi.v1.Controller/ControllerGetVolume", "csi.v1.Controller/ControllerModifyVolume",
            "csi.v1.Controller/ControllerExpandVolume", "csi.v1.Controller/GetCapacity", "csi.v1.Controller/CreateSnapshot",
            "csi.v1.Controller/DeleteSnapshot", "csi.v1.Controller/GetSnapshot",
            "csi.v1.GroupController/CreateVolumeGroupSnapshot", "csi.v1.GroupController/DeleteVolumeGroupSnapshot",
            "csi.v1.GroupController/GetVolumeGroupSnapshot",
            "volumegroup.Controller/CreateVolumeGroup", "volumegroup.Controller/ModifyVolumeGroupMembership",
            "volumegroup.Controller/DeleteVolumeGroup", "volumegroup.Controller/ControllerGetVolumeGroup",
            "reclaimspace.ReclaimSpaceController/ControllerReclaimSpace");

    @Test
    void theRoutersForwardOnTheTransportThreadWhatTheyDidBefore() {
        assertEquals(FORWARDED_BEFORE, Services.onTransportThread());
    }

    @Test
    void theAddonsIdentityListsServiceTypesFirstThenTheRestEachOnce() {
        Capability controller = AddonsIdentityService.service(Capability.Service.Type.CONTROLLER_SERVICE);
        Capability node = AddonsIdentityService.service(Capability.Service.Type.NODE_SERVICE);
        Capability offline = AddonsIdentityService.reclaimSpace(Capability.ReclaimSpace.Type.OFFLINE);
        Capability online = AddonsIdentityService.reclaimSpace(Capability.ReclaimSpace.Type.ONLINE);
        Capability group = Capability.newBuilder().setVolumeGroup(Capability.VolumeGroup.newBuilder()
                .setType(Capability.VolumeGroup.Type.VOLUME_GROUP)).build();
        // as the entries give them: volume groups, reclaim (controller), reclaim (node); a later service repeats CONTROLLER_SERVICE
        var given = List.of(controller, group, offline, node, online, controller);
        assertEquals(List.of(controller, node, group, offline, online), AddonsIdentityService.listing(given).getCapabilitiesList());
    }

    private record Case(DriverConfig.Mode mode, Set<String> csi, Set<String> addons) {}

    /** What Driver's hand-written lists served with the dir engine (no SnapshotMetadata, no ReclaimSpace). */
    @Test
    void eachModeServesWhatItServedBefore(@TempDir Path dir) {
        Set<String> agent = Set.of("csi.v1.Identity", "csi.v1.Controller", "csi.v1.GroupController", "identity.Identity",
                "volumegroup.Controller", "csi4j.cluster.v1.NodeAgent");
        var cases = List.of(
                new Case(DriverConfig.Mode.ALL, Set.of("csi.v1.Identity", "csi.v1.Controller", "csi.v1.GroupController", "csi.v1.Node"),
                        Set.of("identity.Identity", "volumegroup.Controller")),
                new Case(DriverConfig.Mode.CONTROLLER, Set.of("csi.v1.Identity", "csi.v1.Controller", "csi.v1.GroupController"),
                        Set.of("identity.Identity", "volumegroup.Controller")),
                new Case(DriverConfig.Mode.NODE, Set.of("csi.v1.Identity", "csi.v1.Node"), Set.of("identity.Identity")));
        for (Case c : cases) {
            var base = DriverConfig.defaults(dir.resolve(c.mode().name()), "n1").withEngine(EngineKind.DIR);
            var config = new DriverConfig(base.dataDir(), base.nodeId(), base.engine(), base.poolSizeBytes(), c.mode(),
                    base.maxVolumesPerNode(), base.defaultVolumeBytes(), base.overcommitRatio(), base.groupDeletePolicy(),
                    base.oneGroupPerVolume(), base.maxGroupMembers());
            try (Driver driver = Driver.open(config)) {
                assertEquals(c.csi(), names(driver.csiServices()), c.mode() + " csi");
                assertEquals(c.addons(), names(driver.addonsServices()), c.mode() + " addons");
                assertEquals(agent, names(driver.agentServices(null, Bandwidth.unlimited())), c.mode() + " agent");
            }
        }
    }

    private static Set<String> names(List<BindableService> services) {
        return services.stream().map(s -> s.bindService().getServiceDescriptor().getName()).collect(Collectors.toSet());
    }
}
