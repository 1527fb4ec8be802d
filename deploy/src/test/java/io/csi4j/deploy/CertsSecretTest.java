package io.csi4j.deploy;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.cli.Main;
import io.fabric8.kubernetes.api.model.Secret;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/README.md's first step, `csi4j certs --namespace csi4j --kubernetes-secret certs.yaml`, makes exactly the
 * Secrets the workloads mount: their names, their keys, in the namespace, and an agent certificate valid for the
 * host the controller's --agents dials.
 */
class CertsSecretTest {

    @Test
    void certsMakesTheSecretsTheWorkloadsMount(@TempDir Path tmp) throws Exception {
        Path yaml = tmp.resolve("certs.yaml");
        var sink = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        assertEquals(0, Main.run(sink, sink, "certs", "--out", tmp.resolve("pki").toString(), "--namespace",
                KustomizeRenderTest.NAMESPACE, "--kubernetes-secret", yaml.toString()));
        List<Manifests.Doc> secrets = Manifests.parse(Files.readString(yaml), "csi4j certs");
        var docs = Manifests.load();
        for (var w : PodTemplates.workloads(docs)) {
            var csi4j = w.container("csi4j");
            var mount = PodTemplates.resolve(csi4j, PodTemplates.arg(csi4j, "--tls-cert").orElseThrow()).mount();
            String secretName = w.volume(mount.getName()).getSecret().getSecretName();
            Secret secret = secrets.stream().map(Manifests.Doc::typed).map(Secret.class::cast)
                    .filter(s -> s.getMetadata().getName().equals(secretName)).findFirst()
                    .orElseThrow(() -> new AssertionError("csi4j certs makes no Secret " + secretName));
            assertEquals(KustomizeRenderTest.NAMESPACE, secret.getMetadata().getNamespace());
            for (String flag : List.of("--tls-cert", "--tls-key", "--tls-ca")) {
                String key = PodTemplates.resolve(csi4j, PodTemplates.arg(csi4j, flag).orElseThrow()).rest();
                assertTrue(secret.getData().containsKey(key), secretName + " has no " + key);
            }
            if (w.name().equals("csi4j-node")) {
                // the agent certificate carries the host the controller dials
                String agents = PodTemplates.arg(PodTemplates.workload(docs, "csi4j-controller").container("csi4j"), "--agents").orElseThrow();
                String host = agents.substring(0, agents.lastIndexOf(':')).replace("$(NAMESPACE)", KustomizeRenderTest.NAMESPACE);
                var cert = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(
                        new ByteArrayInputStream(Base64.getDecoder().decode(secret.getData().get("tls.crt"))));
                assertTrue(cert.getSubjectAlternativeNames().stream().anyMatch(n -> n.get(1).equals(host)),
                        "agent certificate names " + cert.getSubjectAlternativeNames() + ", not " + host);
            }
        }
    }
}
