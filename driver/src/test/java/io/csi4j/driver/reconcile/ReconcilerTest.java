package io.csi4j.driver.reconcile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.plugin.Driver;
import io.csi4j.driver.volume.AccessMode;
import io.csi4j.driver.volume.Capability;
import io.csi4j.driver.volume.CapacityRange;
import io.csi4j.driver.volume.NewVolume;
import io.csi4j.driver.volume.VolumeShape;
import io.csi4j.driver.volume.Volumes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Crash states the random crash test reaches only by luck, made on purpose. */
class ReconcilerTest {
    private static final long MIB = 1L << 20;

    @TempDir
    Path dataDir;

    @Test
    void anExpansionCutShortAfterTheArtifactGrewIsRecorded() throws Exception {
        DriverConfig config = DriverConfig.defaults(dataDir, "node-r");
        String id;
        try (Driver driver = Driver.open(config)) {
            id = driver.volumes().creation().create(new NewVolume("grown", new CapacityRange(16 * MIB, 0),
                    List.of(Capability.block(AccessMode.SINGLE_NODE_WRITER)), Map.of(), Map.of(), ContentSource.NONE,
                    Optional.empty())).id();
            // the effect of ControllerExpandVolume without its commit: what a kill between the two leaves
            assertEquals(24 * MIB, driver.engine().expandVolume(id, 24 * MIB));
            assertEquals(16 * MIB, driver.catalog().volumes().byId(id).orElseThrow().capacityBytes());
        }
        try (Driver driver = Driver.open(config)) {
            assertEquals(24 * MIB, driver.catalog().volumes().byId(id).orElseThrow().capacityBytes(),
                    "the catalog takes the size the storage has");
            assertTrue(driver.reconcileReport().finished().contains(id), driver.reconcileReport().toString());
            assertEquals(24 * MIB, Files.size(driver.engine().pool().path().resolve("volumes").resolve(id + ".img")));
            // the CO's retry of the interrupted call converges on the same answer
            assertEquals(24 * MIB, driver.volumes().changes().expand(id, new CapacityRange(24 * MIB, 0)).capacityBytes());
        }
        try (Driver driver = Driver.open(config)) {
            assertEquals(List.of(), driver.reconcileReport().finished(), "nothing left to do the next time");
        }
    }

    private static VolumeRecord blank(Driver driver, String name, Capability capability) {
        return driver.volumes().creation().create(new NewVolume(name, new CapacityRange(16 * MIB, 0), List.of(capability), Map.of(),
                Map.of(), ContentSource.NONE, Optional.empty()));
    }

    private static Path volumes(Driver driver) {
        return driver.engine().pool().path().resolve("volumes");
    }

    @Test
    void aBlankCreateAndADeleteEachCostOneSyncOfTheCatalog() {
        try (Driver driver = Driver.open(DriverConfig.defaults(dataDir, "node-r"))) {
            long before = driver.catalog().logSyncs();
            VolumeRecord v = blank(driver, "one-sync", Capability.mount(AccessMode.SINGLE_NODE_WRITER, "ext4"));
            assertEquals(before + 1, driver.catalog().logSyncs(), "CreateVolume of a blank volume: one commit, one sync");
            assertTrue(Files.isRegularFile(volumes(driver).resolve(v.id() + ".img")), "the image is made at once");
            driver.volumes().deletion().delete(v.id());
            assertEquals(before + 2, driver.catalog().logSyncs(), "DeleteVolume: one commit, one sync");
            assertFalse(Files.exists(volumes(driver).resolve(v.id() + ".img")));
            assertFalse(Files.exists(volumes(driver).resolve(v.id() + ".meta")));
            assertEquals(List.of(v.id()), driver.catalog().tombstones().volumeIds(), "until a sync makes the unlink durable");
        }
        try (Driver driver = Driver.open(DriverConfig.defaults(dataDir, "node-r"))) {
            assertEquals(0, driver.catalog().tombstones().count(), "a clean stop syncs and drops them");
        }
    }

    @Test
    void tombstonesAreDroppedInBatchesAfterOneSyncOfThePool() {
        try (Driver driver = Driver.open(DriverConfig.defaults(dataDir, "node-r"))) {
            int n = 300;
            for (int i = 0; i < n; i++) {
                driver.volumes().deletion().delete(blank(driver, "batch-" + i, Capability.block(AccessMode.SINGLE_NODE_WRITER)).id());
            }
            assertEquals(n - 256, driver.catalog().tombstones().count(), "one batch of 256 dropped with a later commit");
            assertEquals(Set.of(), driver.engine().volumeArtifacts());
        }
    }

    @Test
    void aBlankVolumeWhoseImageAPowerCutLostIsMadeAgainFromItsRow() throws Exception {
        DriverConfig config = DriverConfig.defaults(dataDir, "node-r");
        VolumeRecord lost, torn;
        try (Driver driver = Driver.open(config)) {
            lost = blank(driver, "lost", Capability.block(AccessMode.SINGLE_NODE_WRITER));
            torn = blank(driver, "torn", Capability.mount(AccessMode.SINGLE_NODE_WRITER, "xfs"));
            // what a power cut may leave of files made without a sync: nothing, or a name without size and content
            Files.delete(volumes(driver).resolve(lost.id() + ".img"));
            Files.delete(volumes(driver).resolve(lost.id() + ".meta"));
            Files.write(volumes(driver).resolve(torn.id() + ".img"), new byte[0]);
            Files.write(volumes(driver).resolve(torn.id() + ".meta"), new byte[0]);
        }
        try (Driver driver = Driver.open(config)) {
            var report = driver.reconcileReport();
            assertEquals(Set.of(lost.id(), torn.id()), Set.copyOf(report.remade()), report.summary());
            assertTrue(report.clean(), report.summary());
            for (VolumeRecord v : List.of(lost, torn)) {
                assertEquals(State.READY, driver.catalog().volumes().byId(v.id()).orElseThrow().state());
                Artifact a = driver.engine().artifact(Artifact.Kind.VOLUME, v.id()).orElseThrow();
                assertEquals(v.capacityBytes(), a.sizeBytes());
                assertEquals(v.name(), a.name(), "labelled, for fsck --rebuild");
                assertEquals(VolumeShape.accessOf(v), a.access());
            }
            assertEquals(AccessType.mount("xfs"), driver.engine().artifact(Artifact.Kind.VOLUME, torn.id()).orElseThrow().access());
        }
        try (Driver driver = Driver.open(config)) {
            assertEquals(List.of(), driver.reconcileReport().remade(), "nothing to re-make the next time");
        }
    }

    @Test
    void aBlankCreateCutShortBeforeItsCommitIsSweptButAnOrphanHoldingDataIsKept() throws Exception {
        DriverConfig config = DriverConfig.defaults(dataDir, "node-r");
        String empty = "vol-aaaaaaaaaaaaaaaa-node-r";
        String written = "vol-bbbbbbbbbbbbbbbb-node-r";
        try (Driver driver = Driver.open(config)) {
            // the effect of CreateVolume without its commit, as a kill between the two leaves it
            driver.engine().createVolume(empty, 16 * MIB, AccessType.BLOCK, new Artifact.Label("cut-short", ""));
            driver.engine().createVolume(written, 16 * MIB, AccessType.BLOCK, new Artifact.Label("not-ours", ""));
            Files.write(volumes(driver).resolve(written + ".img"), new byte[] {1, 2, 3});
        }
        try (Driver driver = Driver.open(config)) {
            var report = driver.reconcileReport();
            assertEquals(Set.of(empty), report.swept(), report.summary());
            assertEquals(Set.of(written), report.orphanVolumes(), "data no row owns is reported, never removed unasked");
            assertEquals(Set.of(written), driver.engine().volumeArtifacts());
        }
    }

    @Test
    void aDeleteCutShortAfterItsCommitIsFinishedFromTheTombstone() throws Exception {
        DriverConfig config = DriverConfig.defaults(dataDir, "node-r");
        VolumeRecord v;
        try (Driver driver = Driver.open(config)) {
            v = blank(driver, "doomed", Capability.block(AccessMode.SINGLE_NODE_WRITER));
            Files.write(volumes(driver).resolve(v.id() + ".img"), new byte[] {1, 2, 3});   // it held data
            // the commit of DeleteVolume without its effect, as a kill between the two leaves it
            driver.catalog().inTransaction(tx -> {
                tx.volumes().delete(v.id());
                tx.tombstones().add(v.id());
                return null;
            });
        }
        try (Driver driver = Driver.open(config)) {
            var report = driver.reconcileReport();
            assertEquals(Set.of(v.id()), report.swept(), report.summary());
            assertTrue(report.clean(), report.summary());
            assertEquals(Set.of(), driver.engine().volumeArtifacts());
            assertEquals(0, driver.catalog().tombstones().count());
        }
    }

    @Test
    void aBlankDirectoryVolumeWhoseDirectoryAPowerCutLostIsMadeAgainFromItsRow() throws Exception {
        DriverConfig d = DriverConfig.defaults(dataDir, "node-r");
        DriverConfig config = new DriverConfig(d.dataDir(), d.nodeId(), EngineKind.DIR, d.poolSizeBytes(), d.mode(),
                d.maxVolumesPerNode(), d.defaultVolumeBytes(), d.overcommitRatio(), d.groupDeletePolicy(),
                d.oneGroupPerVolume(), d.maxGroupMembers());
        VolumeRecord lost;
        try (Driver driver = Driver.open(config)) {
            lost = blank(driver, "lost-dir", Capability.mount(AccessMode.SINGLE_NODE_WRITER, ""));
            Files.delete(volumes(driver).resolve(lost.id() + ".dir"));
            Files.write(volumes(driver).resolve(lost.id() + ".meta"), new byte[0]);   // torn
        }
        try (Driver driver = Driver.open(config)) {
            assertEquals(List.of(lost.id()), driver.reconcileReport().remade(), driver.reconcileReport().summary());
            assertTrue(Files.isDirectory(volumes(driver).resolve(lost.id() + ".dir")));
            assertEquals("lost-dir", driver.engine().artifact(Artifact.Kind.VOLUME, lost.id()).orElseThrow().name());
        }
    }
}
