package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.testkit.AccessType;
import io.csi4j.testkit.SanityConfig;
import io.csi4j.testkit.SanityReport;
import io.csi4j.testkit.SanityRunner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The conformance suite against a cluster of real processes ({@link ProcessCluster}): three {@code csi4j serve --mode
 * node} agents (dir engine) and a {@code --mode controller} process, as a deployment runs them. Identity, Controller,
 * GroupController and CSI-Addons go to the controller's sockets, Node to node-a's own socket. Unlike
 * {@link ClusterConformanceTest} (agents in the test's JVM), every call crosses the mutual-TLS agent link between
 * processes, with each role's own flags, start-up and interceptors.
 */
class ClusterProcessConformanceTest {

    @Test
    void suitePassesThroughAControllerProcess(@TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        SanityReport report;
        try (var cluster = ProcessCluster.start(tmp, List.of("node-a", "node-b", "node-c"), List.of(), List.of())) {
            Path controllerDir = tmp.resolve("controller");
            var config = SanityConfig.builder(cluster.controllerSocket())
                    .addonsEndpoint("unix://" + controllerDir.resolve("csi-addons.sock"))
                    .nodeEndpoint("unix://" + tmp.resolve("node-a").resolve("csi.sock"))
                    .stagingDir(Files.createDirectories(tmp.resolve("staging")))
                    .targetDir(Files.createDirectories(tmp.resolve("target")))
                    .volumeSize(512L << 20)
                    .accessType(AccessType.MOUNT)
                    .secrets(Map.of("csi4j-test-secret", "s3cr3t-never-logged"));
            report = new SanityRunner(config.build(), System.out).run();
            report.writeJUnitXml(Path.of("target", "sanity-cluster-processes.xml"));
            String logs = cluster.controller.stderr() + cluster.agents.values().stream().map(a -> a.child.stderr()).reduce("", String::concat);
            assertFalse(logs.contains("s3cr3t-never-logged"), "a secret reached a process's log");
        }
        System.out.println("cluster of processes: " + report.summary());
        assertTrue(report.passed() > 100, "the suite really ran: " + report.summary());
        assertEquals(0, report.failed(), () -> "conformance failures through the controller process:\n"
                + String.join("\n", report.failures().stream().map(r -> r.name() + ": " + r.message()).toList()));
    }
}
