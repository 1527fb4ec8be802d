package io.csi4j.cli.certs;

import io.csi4j.cli.certs.CertificateAuthority.Issued;
import io.csi4j.cli.certs.CertificateAuthority.Usage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import java.nio.file.StandardCopyOption;

/**
 * {@code csi4j certs}: the certificates of a cluster's agent link (docs/cluster.md): a private CA, one agent
 * server certificate for every node agent (valid for the names the controller's {@code --agents} uses), and a
 * controller client certificate; PKCS#8 PEM keys, as {@code serve --tls-key} wants them. Optionally the two
 * Kubernetes Secrets deploy/kubernetes mounts. Exit codes: 0 written, 1 refused (files exist), 2 bad arguments.
 */
@Command(name = "certs", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Make the cluster's private CA and its agent and controller certificates.",
                "Files: ca.pem + ca-key.pem (the CA); agent.pem + agent-key.pem (TLS server, and",
                "client of the other agents for copies); controller.pem + controller-key.pem (TLS",
                "client). EC P-256 keys in PKCS#8 PEM.",
                "Kubernetes: csi4j certs --namespace csi4j --kubernetes-secret certs.yaml",
                "(then kubectl apply -f certs.yaml)."})
public final class CertsCommand implements Callable<Integer> {

    @Option(names = "--out", paramLabel = "DIR", defaultValue = "./csi4j-certs", description = "Where the PEM files go. Default: ${DEFAULT-VALUE}")
    Path out;

    @Option(names = "--agent-name", paramLabel = "NAME", split = ",",
            description = "A DNS name or IP address the agent certificate is valid for: each host the controller's --agents names "
                    + "(repeatable or comma-separated). Default without --namespace: 127.0.0.1 and localhost")
    List<String> agentNames = new ArrayList<>();

    @Option(names = "--namespace", paramLabel = "NS",
            description = "Add the headless Service's names: SERVICE.NS.svc, SERVICE.NS.svc.cluster.local and *.SERVICE.NS.svc")
    String namespace;

    @Option(names = "--service", paramLabel = "NAME", defaultValue = "csi4j-agent",
            description = "The agents' headless Service (with --namespace). Default: ${DEFAULT-VALUE}")
    String service;

    @Option(names = "--cluster-domain", paramLabel = "DOMAIN", defaultValue = "cluster.local",
            description = "The cluster's DNS domain (with --namespace). Default: ${DEFAULT-VALUE}")
    String clusterDomain;

    @Option(names = "--days", paramLabel = "N", defaultValue = "365", description = "Validity of every certificate. Default: ${DEFAULT-VALUE}")
    int days;

    @Option(names = "--ca-cert", paramLabel = "PEM", description = "Issue from this existing CA (with --ca-key) instead of a new one: rotate leaves, keep the trust")
    Path caCert;

    @Option(names = "--ca-key", paramLabel = "PEM", description = "The existing CA's PKCS#8 key")
    Path caKey;

    @Option(names = "--kubernetes-secret", paramLabel = "FILE",
            description = "Also write Secrets csi4j-agent-tls and csi4j-controller-tls (tls.crt, tls.key, ca.crt) as YAML; '-' for stdout")
    String secretFile;

    @Option(names = "--force", description = "Overwrite existing files")
    boolean force;

    @Override
    public Integer call() throws IOException {
        if (days < 1) return usage("--days must be at least 1");
        if ((caCert == null) != (caKey == null)) return usage("--ca-cert and --ca-key go together");
        if (secretFile != null && namespace == null) return usage("--kubernetes-secret needs --namespace");
        var names = new LinkedHashSet<>(agentNames);
        if (namespace != null) {
            names.add(service + "." + namespace + ".svc");
            names.add(service + "." + namespace + ".svc." + clusterDomain);
            names.add("*." + service + "." + namespace + ".svc");
        }
        if (names.isEmpty()) names.addAll(List.of("127.0.0.1", "localhost"));

        Map<String, String> files = new LinkedHashMap<>();
        Duration validity = Duration.ofDays(days);
        Issued agent;
        Issued controller;
        CertificateAuthority ca;
        try {
            ca = caCert != null ? CertificateAuthority.load(caCert, caKey) : CertificateAuthority.create("csi4j cluster CA", validity);
            agent = ca.issue("csi4j agent", List.copyOf(names), Usage.BOTH, validity);  // client too: agents pull copies from each other
            controller = ca.issue("csi4j controller", List.of(), Usage.CLIENT, validity);
            files.put("ca.pem", ca.certificate().certificatePem());
            if (caCert == null) files.put("ca-key.pem", ca.certificate().keyPem());
            files.put("agent.pem", agent.certificatePem());
            files.put("agent-key.pem", agent.keyPem());
            files.put("controller.pem", controller.certificatePem());
            files.put("controller-key.pem", controller.keyPem());
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return usage(e.getMessage());
        }
        Files.createDirectories(out);
        if (!force) {
            for (String f : files.keySet()) {
                if (Files.exists(out.resolve(f))) {
                    System.err.println("csi4j certs: " + out.resolve(f) + " exists (--force to overwrite)");
                    return 1;
                }
            }
        }
        for (var e : files.entrySet()) write(out.resolve(e.getKey()), e.getValue(), e.getKey().endsWith("-key.pem"));
        if (secretFile != null) {
            String yaml = secret("csi4j-agent-tls", files.get("agent.pem"), files.get("agent-key.pem"), files.get("ca.pem"))
                    + "---\n" + secret("csi4j-controller-tls", files.get("controller.pem"), files.get("controller-key.pem"), files.get("ca.pem"));
            if (secretFile.equals("-")) {
                System.out.print(yaml);
            } else {
                write(Path.of(secretFile), yaml, true);
            }
        }
        System.err.println("csi4j certs: " + String.join(", ", files.keySet()) + " in " + out + "; agent valid for " + String.join(", ", names)
                + (secretFile != null && !secretFile.equals("-") ? "; Secrets in " + secretFile : ""));
        return 0;
    }

    private String secret(String name, String cert, String key, String caPem) {
        return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + name + "\n  namespace: " + namespace
                + "\n  labels:\n    app.kubernetes.io/name: csi4j\n    app.kubernetes.io/part-of: csi4j\n"
                + "type: kubernetes.io/tls\ndata:\n"
                + "  tls.crt: " + b64(cert) + "\n  tls.key: " + b64(key) + "\n  ca.crt: " + b64(caPem) + "\n";
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.US_ASCII));
    }

    private static void write(Path file, String text, boolean secret) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.deleteIfExists(tmp);
        if (secret) {
            Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } else {
            Files.createFile(tmp);
        }
        Files.writeString(tmp, text, StandardCharsets.US_ASCII);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static int usage(String message) {
        System.err.println("csi4j certs: " + message);
        return 2;
    }
}
