package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.cli.Main;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.csi.*;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code csi4j certs}: what it writes is valid X.509 and PKCS#8, and a real controller talks to a real agent with it. */
class ClusterCertsTest {

    @Test
    void certificatesChainAndCarryTheNamesAndUsages(@TempDir Path tmp) throws Exception {
        assertEquals(0, run("certs", "--out", tmp.toString(), "--namespace", "storage", "--agent-name", "10.0.0.7,node-1"));
        X509Certificate ca = read(tmp.resolve("ca.pem"));
        X509Certificate agent = read(tmp.resolve("agent.pem"));
        X509Certificate controller = read(tmp.resolve("controller.pem"));
        assertTrue(ca.getBasicConstraints() >= 0, "CA:TRUE");
        assertEquals(-1, agent.getBasicConstraints());
        validate(agent, ca);
        validate(controller, ca);
        List<String> sans = agent.getSubjectAlternativeNames().stream().map(n -> n.get(1).toString()).toList();
        assertEquals(List.of("10.0.0.7", "node-1", "csi4j-agent.storage.svc", "csi4j-agent.storage.svc.cluster.local",
                "*.csi4j-agent.storage.svc"), sans);
        // an agent serves the controller and its peers, and pulls copies from its peers as their client
        assertEquals(List.of("1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"), agent.getExtendedKeyUsage(), "agent: serverAuth and clientAuth");
        assertEquals(List.of("1.3.6.1.5.5.7.3.2"), controller.getExtendedKeyUsage(), "controller: clientAuth");
        assertTrue(agent.getKeyUsage()[0], "digitalSignature");
        assertTrue(ca.getKeyUsage()[5], "keyCertSign");
        for (String key : List.of("ca-key.pem", "agent-key.pem", "controller-key.pem")) {
            assertTrue(Files.readString(tmp.resolve(key)).startsWith("-----BEGIN PRIVATE KEY-----"), key + " is PKCS#8");
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(tmp.resolve(key))), key);
        }
        // no overwrite without --force; a new leaf from the same CA with --ca-cert/--ca-key
        assertEquals(1, run("certs", "--out", tmp.toString()));
        Path rotated = tmp.resolve("rotated");
        assertEquals(0, run("certs", "--out", rotated.toString(), "--ca-cert", tmp.resolve("ca.pem").toString(),
                "--ca-key", tmp.resolve("ca-key.pem").toString()));
        assertFalse(Files.exists(rotated.resolve("ca-key.pem")));
        validate(read(rotated.resolve("agent.pem")), ca);
        assertEquals(2, run("certs", "--out", tmp.resolve("bad").toString(), "--agent-name", "not a name"));
    }

    @Test
    void kubernetesSecretsHoldTheFiles(@TempDir Path tmp) throws Exception {
        Path yaml = tmp.resolve("secrets.yaml");
        assertEquals(0, run("certs", "--out", tmp.resolve("pki").toString(), "--namespace", "csi4j", "--kubernetes-secret", yaml.toString()));
        String text = Files.readString(yaml);
        assertTrue(text.contains("name: csi4j-agent-tls\n  namespace: csi4j\n"), text);
        assertTrue(text.contains("name: csi4j-controller-tls\n"), text);
        assertTrue(text.contains("type: kubernetes.io/tls\n"), text);
        String agentCrt = text.lines().filter(l -> l.startsWith("  tls.crt: ")).findFirst().orElseThrow().substring(11);
        assertEquals(Files.readString(tmp.resolve("pki/agent.pem")), new String(Base64.getDecoder().decode(agentCrt), StandardCharsets.US_ASCII));
        assertFalse(text.contains(b64(Files.readString(tmp.resolve("pki/ca-key.pem")))), "the CA key stays out of the cluster");
    }

    /** The certificates as serve uses them: an agent process with agent.pem, a controller process with controller.pem. */
    @Test
    void controllerReachesAgentWithTheseCertificates(@TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        Path pki = tmp.resolve("pki");
        assertEquals(0, run("certs", "--out", pki.toString()));  // default names: 127.0.0.1, localhost
        List<ServeChild> children = new ArrayList<>();
        ManagedChannel channel = null;
        try {
            ServeChild agent = ServeChild.start(List.of("--mode", "node", "--node-id", "node-a", "--engine", "dir",
                    "--data-dir", tmp.resolve("node-a").toString(), "--agent-endpoint", "tcp://127.0.0.1:0",
                    "--tls-cert", pki.resolve("agent.pem").toString(), "--tls-key", pki.resolve("agent-key.pem").toString(),
                    "--tls-ca", pki.resolve("ca.pem").toString()));
            children.add(agent);
            String port = agent.field("agent").substring("tcp://127.0.0.1:".length());
            Path controllerDir = tmp.resolve("controller");
            ServeChild controller = ServeChild.start(List.of("--mode", "controller", "--data-dir", controllerDir.toString(),
                    "--agents", "localhost:" + port,
                    "--tls-cert", pki.resolve("controller.pem").toString(), "--tls-key", pki.resolve("controller-key.pem").toString(),
                    "--tls-ca", pki.resolve("ca.pem").toString()));
            children.add(controller);
            channel = Channels.connect(Endpoint.parse("unix://" + controllerDir.resolve("csi.sock")));
            var csi = ControllerGrpc.newBlockingStub(channel);
            long deadline = System.nanoTime() + 60_000_000_000L;
            Volume created = null;
            while (created == null) {
                try {
                    created = csi.createVolume(ClusterRoutingTest.volume("over-certs-made-by-csi4j").build()).getVolume();
                } catch (io.grpc.StatusRuntimeException e) {
                    if (System.nanoTime() > deadline) fail("controller never reached the agent: " + e.getStatus() + "\n" + controller.stderr());
                    Thread.sleep(250);
                }
            }
            assertTrue(created.getVolumeId().endsWith("-node-a"), created.getVolumeId());
            csi.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(created.getVolumeId()).build());
        } finally {
            if (channel != null) channel.shutdownNow();
            for (ServeChild child : children.reversed()) child.close();
        }
    }

    private static int run(String... args) {
        var sink = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        return Main.run(sink, sink, args);
    }

    private static X509Certificate read(Path file) throws Exception {
        try (InputStream in = Files.newInputStream(file)) {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }

    private static void validate(X509Certificate leaf, X509Certificate ca) throws Exception {
        var params = new PKIXParameters(Set.of(new TrustAnchor(ca, null)));
        params.setRevocationEnabled(false);
        CertPathValidator.getInstance("PKIX").validate(CertificateFactory.getInstance("X.509").generateCertPath(List.of(leaf)), params);
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.US_ASCII));
    }
}
