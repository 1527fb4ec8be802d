package io.csi4j.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.List;
import org.junit.jupiter.api.Test;

/** deploy/examples/smoke-test.yaml: valid API objects, a claim of a StorageClass the kustomization installs, mounted by its pod. */
class SmokeTestManifestTest {
    @Test
    void theSmokeTestClaimsAnInstalledClassAndItsPodMountsTheClaim() {
        var docs = Manifests.read(Manifests.ROOT.resolve("deploy/examples/smoke-test.yaml"));
        PersistentVolumeClaim claim = Manifests.all(docs, PersistentVolumeClaim.class).getFirst();
        Pod pod = Manifests.all(docs, Pod.class).getFirst();
        List<String> classes = Manifests.all(Manifests.load(), StorageClass.class).stream().map(c -> c.getMetadata().getName()).toList();
        assertTrue(classes.contains(claim.getSpec().getStorageClassName()), claim.getSpec().getStorageClassName() + " not in " + classes);
        var volume = pod.getSpec().getVolumes().getFirst();
        assertEquals(claim.getMetadata().getName(), volume.getPersistentVolumeClaim().getClaimName());
        var mount = pod.getSpec().getContainers().getFirst().getVolumeMounts().getFirst();
        assertEquals(volume.getName(), mount.getName());
        assertEquals(claim.getMetadata().getNamespace(), pod.getMetadata().getNamespace());
        assertEquals("Never", pod.getSpec().getRestartPolicy());
        assertTrue(String.join(" ", pod.getSpec().getContainers().getFirst().getCommand()).contains("csi4j smoke test: ok"));
    }
}
