package io.csi4j.deploy;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.deploy.Manifests.Doc;
import io.csi4j.driver.volume.Provisioning;
import io.csi4j.driver.volume.ReplicationParameters;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.VolumeAttributesClass;
import java.nio.file.Files;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Every manifest reads as its Kubernetes API type, strictly, and says what issue 16 asks of it. */
class ManifestModelTest {

    @Test
    void everyManifestIsItsApiTypeWithNoUnknownField() throws Exception {
        List<Doc> docs = Manifests.load();
        assertTrue(docs.size() > 20, "documents: " + docs.size());
        Set<String> names = new HashSet<>();
        for (Doc d : docs) assertTrue(names.add(d.kind() + "/" + d.name()), "duplicate " + d);
        // every YAML file in the directory is in the kustomization (nothing silently left out)
        Set<String> listed = new HashSet<>(Manifests.kustomization().resources());
        try (Stream<java.nio.file.Path> files = Files.list(Manifests.DIR)) {
            for (var f : files.filter(p -> p.toString().endsWith(".yaml")).toList()) {
                String name = f.getFileName().toString();
                if (!name.equals("kustomization.yaml")) assertTrue(listed.contains(name), name + " is not in kustomization.yaml");
            }
        }
    }

    @Test
    void strictnessCatchesAnUnknownFieldAndAMistypedValue() {
        var unknown = assertThrows(AssertionError.class, () -> Manifests.parse("""
                apiVersion: storage.k8s.io/v1
                kind: StorageClass
                metadata: {name: x}
                provisioner: local.csi4j.io
                volumeBindingMode: WaitForFirstConsumer
                allowVolumeExpansions: true
                """, "test"));
        assertTrue(unknown.getMessage().contains("allowVolumeExpansions"), unknown.getMessage());
        var nested = assertThrows(AssertionError.class, () -> Manifests.parse("""
                apiVersion: apps/v1
                kind: DaemonSet
                metadata: {name: x}
                spec:
                  selector: {matchLabels: {a: b}}
                  template:
                    metadata: {labels: {a: b}}
                    spec:
                      containers:
                        - name: c
                          image: i
                          volumeMounts:
                            - {name: v, mountPath: /v, mountPropagaton: Bidirectional}
                """, "test"));
        assertTrue(nested.getMessage().contains("spec.template.spec.containers[0].volumeMounts[0].mountPropagaton"), nested.getMessage());
        assertThrows(AssertionError.class, () -> Manifests.parse("""
                apiVersion: groupsnapshot.storage.k8s.io/v1
                kind: VolumeGroupSnapshotClass
                metadata: {name: x}
                driver: local.csi4j.io
                deletionPolicy: Delete
                parameter: {}
                """, "test"));
    }

    @Test
    void csiDriverSaysWhatANodeLocalDriverIs() {
        CSIDriver driver = Manifests.all(Manifests.load(), CSIDriver.class).getFirst();
        assertEquals("local.csi4j.io", driver.getMetadata().getName());
        var spec = driver.getSpec();
        assertTrue(spec.getAttachRequired(), "replicated volumes hand over at attach: the external-attacher calls ControllerPublishVolume");
        assertTrue(spec.getPodInfoOnMount());
        assertTrue(spec.getStorageCapacity());
        assertEquals("File", spec.getFsGroupPolicy());
        assertFalse(spec.getSeLinuxMount(), "csi4j does not honour the context mount option");
        assertEquals(List.of("Persistent", "Ephemeral"), spec.getVolumeLifecycleModes());
    }

    @Test
    void storageClassesWaitForTheirConsumerAndExpand() {
        var docs = Manifests.load();
        List<StorageClass> classes = Manifests.all(docs, StorageClass.class);
        assertFalse(classes.isEmpty());
        for (StorageClass sc : classes) {
            assertEquals("local.csi4j.io", sc.getProvisioner());
            assertEquals("WaitForFirstConsumer", sc.getVolumeBindingMode(), sc.getMetadata().getName());
            assertTrue(sc.getAllowVolumeExpansion(), sc.getMetadata().getName());
            Provisioning.of(sc.getParameters());   // thin or thick, or the driver would refuse every create
            ReplicationParameters.of(sc.getParameters());   // replicas and interval the driver accepts
        }
        StorageClass replicated = classes.stream().filter(sc -> sc.getMetadata().getName().equals("csi4j-replicated")).findFirst().orElseThrow();
        assertEquals(new ReplicationParameters(2, java.time.Duration.ofSeconds(30)), ReplicationParameters.of(replicated.getParameters()));
        StorageClass thick = classes.stream().filter(sc -> sc.getMetadata().getName().equals("csi4j-local-thick")).findFirst().orElseThrow();
        assertEquals(Provisioning.THICK, Provisioning.of(thick.getParameters()));
        VolumeAttributesClass vac = Manifests.all(docs, VolumeAttributesClass.class).getFirst();
        assertEquals("local.csi4j.io", vac.getDriverName());
        long readAhead = Long.parseLong(vac.getParameters().get("readAheadKiB"));
        assertTrue(readAhead >= 0 && readAhead <= 65536, "readAheadKiB within the driver's bounds: " + readAhead);
        var group = Manifests.all(docs, Manifests.VolumeGroupSnapshotClass.class).getFirst();
        assertEquals("local.csi4j.io", group.driver());
        assertTrue(Set.of("Delete", "Retain").contains(group.deletionPolicy()), group.deletionPolicy());
    }

    @Test
    void controllerIsUnprivilegedAndTheNodeAgentPrivileged() {
        var docs = Manifests.load();
        Deployment controller = Manifests.all(docs, Deployment.class).getFirst();
        var pod = controller.getSpec().getTemplate().getSpec();
        assertEquals(65532L, pod.getSecurityContext().getRunAsUser());
        assertTrue(pod.getSecurityContext().getRunAsNonRoot());
        for (var c : pod.getContainers()) {
            var sc = c.getSecurityContext();
            assertNotNull(sc, c.getName());
            assertNotEquals(Boolean.TRUE, sc.getPrivileged(), c.getName());
            assertFalse(sc.getAllowPrivilegeEscalation(), c.getName());
            assertEquals(List.of("ALL"), sc.getCapabilities().getDrop(), c.getName());
            assertTrue(sc.getReadOnlyRootFilesystem(), c.getName());
        }
        DaemonSet node = Manifests.all(docs, DaemonSet.class).getFirst();
        var agent = node.getSpec().getTemplate().getSpec().getContainers().stream().filter(c -> c.getName().equals("csi4j")).findFirst().orElseThrow();
        assertTrue(agent.getSecurityContext().getPrivileged());
        var kubelet = agent.getVolumeMounts().stream().filter(m -> m.getMountPath().equals("/var/lib/kubelet")).findFirst().orElseThrow();
        assertEquals("Bidirectional", kubelet.getMountPropagation());
        assertTrue(agent.getVolumeMounts().stream().anyMatch(m -> m.getMountPath().equals("/dev")));
    }
}
