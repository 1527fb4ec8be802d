package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.testkit.AccessType;
import io.csi4j.testkit.SanityConfig;
import io.csi4j.testkit.SanityReport;
import io.csi4j.testkit.SanityRunner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The project's conformance suite against a cluster on this machine: the controller's sockets for Identity,
 * Controller, GroupController and CSI-Addons, and node-a's own socket for Node. Three agents (as CI must run), so every call
 * really is routed (the suite's volumes ask for node-a's topology, as a CO with late binding does).
 */
class ClusterConformanceTest {

    static Stream<Arguments> clusters() {
        return Stream.of(
                Arguments.of("dir engine, mount", EngineKind.DIR, OptionalLong.empty(), AccessType.MOUNT, null, Map.of()),
                Arguments.of("image engine, mount (xfs) on XFS reflink pools", EngineKind.IMAGE, OptionalLong.of(4L << 30),
                        AccessType.MOUNT, "xfs", Map.of("readAheadKiB", "256")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("clusters")
    void suitePassesThroughTheController(String name, EngineKind engine, OptionalLong poolSize, AccessType access, String fsType,
                                         Map<String, String> mutable, @TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        SanityReport report;
        try (var cluster = LocalCluster.start(tmp, List.of("node-a", "node-b", "node-c"), engine, poolSize)) {
            var config = SanityConfig.builder(cluster.controllerSocket())
                    .addonsEndpoint(cluster.controllerAddonsSocket())
                    .nodeEndpoint(cluster.nodes.get("node-a").nodeSocket())
                    .stagingDir(Files.createDirectories(tmp.resolve("staging")))
                    .targetDir(Files.createDirectories(tmp.resolve("target")))
                    .volumeSize(512L << 20)
                    .accessType(access)
                    .mutableParams(mutable)
                    .secrets(Map.of("csi4j-test-secret", "s3cr3t-never-logged"));
            if (fsType != null) config.fsType(fsType);
            report = new SanityRunner(config.build(), System.out).run();
            report.writeJUnitXml(Path.of("target", "sanity-cluster-" + name.replaceAll("[^a-z0-9]+", "-") + ".xml"));
        }
        System.out.println("cluster, " + name + ": " + report.summary());
        assertTrue(report.passed() > 100, "the suite really ran: " + report.summary());
        assertEquals(0, report.failed(), () -> "conformance failures through the cluster controller (" + name + "):\n"
                + String.join("\n", report.failures().stream().map(r -> r.name() + ": " + r.message()).toList()));
    }
}
