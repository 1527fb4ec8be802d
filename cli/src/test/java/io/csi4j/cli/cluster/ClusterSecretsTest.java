package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterRoutingTest.on;
import static io.csi4j.cli.cluster.ClusterRoutingTest.volume;
import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.csi.*;
import io.csi4j.sdk.Secrets;
import io.grpc.StatusRuntimeException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Secrets in requests stay redacted end to end through the cluster: requests with secrets (answered, and failing
 * in the controller and in an agent) sent through the controller, both processes logging every call at debug;
 * the secret's value is in no error message, no log line (stdout and stderr of controller and agents) and no
 * metrics page.
 */
class ClusterSecretsTest {
    private static final String SECRET = "sup3r-s3cr3t-value-" + Long.toHexString(System.nanoTime());
    private static final Map<String, String> SECRETS = Map.of("password", SECRET, "token", SECRET + "-2");

    @Test
    void secretsAreInNoLogErrorOrMetricOfControllerOrAgents(@TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        try (var cluster = new ProcessCluster(tmp)) {
            List<String> metrics = new ArrayList<>();
            for (String node : List.of("node-a", "node-b")) {
                String address = "127.0.0.1:" + ProcessCluster.freePort();
                metrics.add(address);
                cluster.addAgent(node, node, List.of("--log-level", "debug", "--metrics-address", address)).start();
            }
            String controllerMetrics = "127.0.0.1:" + ProcessCluster.freePort();
            metrics.add(controllerMetrics);
            cluster.startController(List.of("--log-level", "debug", "--metrics-address", controllerMetrics));
            cluster.awaitEveryNode();
            var csi = ControllerGrpc.newBlockingStub(cluster.controllerChannel()).withDeadlineAfter(60, TimeUnit.SECONDS);

            List<String> errors = new ArrayList<>();
            var made = csi.createVolume(volume("with-secrets").putAllSecrets(SECRETS).setAccessibilityRequirements(
                    TopologyRequirement.newBuilder().addRequisite(on("node-b"))).build()).getVolume();
            var anywhere = csi.createVolume(volume("with-secrets-anywhere").putAllSecrets(SECRETS).build()).getVolume();
            // failing in the controller: a requisite of no node; an id of no node
            errors.add(error(() -> csi.createVolume(volume("nowhere").putAllSecrets(SECRETS).setAccessibilityRequirements(
                    TopologyRequirement.newBuilder().addRequisite(on("node-z"))).build())));
            errors.add(error(() -> csi.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId("vol-aaaaaaaaaaaaaaaa-node-z")
                    .putAllSecrets(SECRETS).build())));
            // failing in an agent: more than its pool can hold; a name taken with another size
            errors.add(error(() -> csi.createVolume(volume("too-big").putAllSecrets(SECRETS)
                    .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(1L << 60)).setAccessibilityRequirements(
                            TopologyRequirement.newBuilder().addRequisite(on("node-a"))).build())));
            errors.add(error(() -> csi.createVolume(volume("with-secrets").putAllSecrets(SECRETS)
                    .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(3 << 20)).setAccessibilityRequirements(
                            TopologyRequirement.newBuilder().addRequisite(on("node-b"))).build())));
            var snapshot = csi.createSnapshot(CreateSnapshotRequest.newBuilder().setName("snap-with-secrets")
                    .setSourceVolumeId(made.getVolumeId()).putAllSecrets(SECRETS).build()).getSnapshot();
            csi.deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(snapshot.getSnapshotId()).putAllSecrets(SECRETS).build());
            for (var v : List.of(made, anywhere)) {
                csi.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).putAllSecrets(SECRETS).build());
            }
            for (String e : errors) assertFalse(e.contains(SECRET), "error message carries the secret: " + e);

            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
            for (String address : metrics) {
                var page = http.send(HttpRequest.newBuilder(URI.create("http://" + address + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, page.statusCode(), address);
                assertFalse(page.body().isEmpty(), address);
                assertFalse(page.body().contains(SECRET), "metrics of " + address + " carry the secret");
            }

            // stop everything (logs flushed), then read every stream
            cluster.controller.stop();
            for (var agent : cluster.agents.values()) agent.child.stop();
            StringBuilder all = new StringBuilder();
            for (ServeChild child : children(cluster)) {
                String out = child.stdout() + "\n" + child.stderr();
                assertFalse(out.contains(SECRET), "a log carries the secret:\n" + out);
                all.append(out);
            }
            // the requests were logged (so the check above means something), with their secrets masked
            assertTrue(all.indexOf(Secrets.MASK) >= 0, "debug logs show the masked secrets:\n" + all);
            assertTrue(cluster.controller.stderr().contains(Secrets.MASK), "the controller logged the requests:\n" + cluster.controller.stderr());
        }
    }

    private static List<ServeChild> children(ProcessCluster cluster) {
        List<ServeChild> children = new ArrayList<>();
        children.add(cluster.controller);
        cluster.agents.values().forEach(a -> children.add(a.child));
        return children;
    }

    private static String error(org.junit.jupiter.api.function.Executable call) {
        var e = assertThrows(StatusRuntimeException.class, call);
        return e.getStatus().toString() + " " + e.getMessage();
    }
}
