package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.csi.*;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.MutualTls;
import io.grpc.ManagedChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster as {@code csi4j serve} runs it, one process each: two node agents ({@code --mode node
 * --agent-endpoint}) and a controller ({@code --mode controller --agents}), all with the flags the README shows.
 */
class ClusterServeTest {

    @Test
    void controllerProcessRoutesToAgentProcesses(@TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        var ca = TestCertificates.authority(tmp.resolve("pki"), "cluster");
        MutualTls agentTls = ca.issue("agent");
        MutualTls controllerTls = ca.issue("controller");
        List<ServeChild> children = new ArrayList<>();
        ManagedChannel channel = null;
        try {
            List<String> agents = new ArrayList<>();
            for (String node : List.of("node-a", "node-b")) {
                Path data = tmp.resolve(node);
                ServeChild agent = ServeChild.start(List.of("--mode", "node", "--node-id", node, "--engine", "dir",
                        "--data-dir", data.toString(), "--agent-endpoint", "tcp://127.0.0.1:0",
                        "--tls-cert", agentTls.certificate().toString(), "--tls-key", agentTls.privateKey().toString(),
                        "--tls-ca", agentTls.ca().toString()));
                children.add(agent);
                agents.add(agent.field("agent").substring("tcp://".length()));
            }
            Path controllerDir = tmp.resolve("controller");
            ServeChild controller = ServeChild.start(List.of("--mode", "controller", "--data-dir", controllerDir.toString(),
                    "--agents", String.join(",", agents),
                    "--tls-cert", controllerTls.certificate().toString(), "--tls-key", controllerTls.privateKey().toString(),
                    "--tls-ca", controllerTls.ca().toString()));
            children.add(controller);
            // where netty-tcnative ships its library (linux-x86_64, this machine kind) the links run on OpenSSL
            if (System.getProperty("os.name").equals("Linux") && System.getProperty("os.arch").equals("amd64")) {
                for (ServeChild child : children) assertEquals("OpenSSL", child.field("tls"), child.startupLine);
            }
            channel = Channels.connect(Endpoint.parse("unix://" + controllerDir.resolve("csi.sock")));
            var csi = ControllerGrpc.newBlockingStub(channel);
            awaitEveryNode(csi, controller);
            var created = csi.createVolume(ClusterRoutingTest.volume("through-processes").setAccessibilityRequirements(
                    TopologyRequirement.newBuilder().addRequisite(ClusterRoutingTest.on("node-b"))).build()).getVolume();
            assertTrue(created.getVolumeId().endsWith("-node-b"), created.getVolumeId());
            var listed = csi.listVolumes(ListVolumesRequest.getDefaultInstance());
            assertEquals(List.of(created.getVolumeId()), listed.getEntriesList().stream().map(e -> e.getVolume().getVolumeId()).toList());
            csi.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(created.getVolumeId()).build());
            var info = IdentityGrpc.newBlockingStub(channel).getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
            assertEquals("local.csi4j.io", info.getName());
            assertEquals("controller", info.getManifestMap().get("role"));

            // the node agent still serves Node on its own socket
            try (var nodeChannel = new Closing(Channels.connect(Endpoint.parse("unix://" + tmp.resolve("node-a").resolve("csi.sock"))))) {
                assertEquals("node-a", NodeGrpc.newBlockingStub(nodeChannel.channel()).nodeGetInfo(NodeGetInfoRequest.getDefaultInstance()).getNodeId());
            }
            for (ServeChild child : children.reversed()) assertEquals(0, child.stop(), "SIGTERM stops with 0:\n" + child.stderr());
        } finally {
            if (channel != null) channel.shutdownNow();
            for (ServeChild child : children.reversed()) child.close();
        }
    }

    /**
     * Discovery by a DNS name that resolves to every agent (a headless Service in Kubernetes): here a hosts file
     * of the controller's JVM gives {@code csi4j-agents} two loopback addresses, one agent on each, same port.
     * The agents' certificate carries that name, not their addresses.
     */
    @Test
    void agentsFoundByOneNameResolvingToSeveralAddresses(@TempDir Path tmp) throws Exception {
        Privileged.requireRoot();
        var ca = TestCertificates.authority(tmp.resolve("pki"), "cluster");
        MutualTls agentTls = ca.issue("agent", "csi4j-agents");
        MutualTls controllerTls = ca.issue("controller");
        int port;
        try (var probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.2"))) {
            port = probe.getLocalPort();
        }
        Path hosts = java.nio.file.Files.writeString(tmp.resolve("hosts"), "127.0.0.2 csi4j-agents\n127.0.0.3 csi4j-agents\n");
        List<ServeChild> children = new ArrayList<>();
        ManagedChannel channel = null;
        try {
            for (String node : List.of("node-a", "node-b")) {
                String address = node.equals("node-a") ? "127.0.0.2" : "127.0.0.3";
                children.add(ServeChild.start(List.of("--mode", "node", "--node-id", node, "--engine", "dir",
                        "--data-dir", tmp.resolve(node).toString(), "--agent-endpoint", "tcp://" + address + ":" + port,
                        "--tls-cert", agentTls.certificate().toString(), "--tls-key", agentTls.privateKey().toString(),
                        "--tls-ca", agentTls.ca().toString())));
            }
            Path controllerDir = tmp.resolve("controller");
            ServeChild controller = ServeChild.start(List.of("-Djdk.net.hosts.file=" + hosts),
                    List.of("--mode", "controller", "--data-dir", controllerDir.toString(), "--agents", "csi4j-agents:" + port,
                            "--tls-cert", controllerTls.certificate().toString(), "--tls-key", controllerTls.privateKey().toString(),
                            "--tls-ca", controllerTls.ca().toString()));
            children.add(controller);
            channel = Channels.connect(Endpoint.parse("unix://" + controllerDir.resolve("csi.sock")));
            var csi = ControllerGrpc.newBlockingStub(channel);
            awaitEveryNode(csi, controller);
            for (String node : List.of("node-a", "node-b")) {
                var v = csi.createVolume(ClusterRoutingTest.volume("on-" + node).setAccessibilityRequirements(
                        TopologyRequirement.newBuilder().addRequisite(ClusterRoutingTest.on(node))).build()).getVolume();
                assertTrue(v.getVolumeId().endsWith("-" + node), v.getVolumeId());
            }
            assertEquals(2, csi.listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesCount());
        } finally {
            if (channel != null) channel.shutdownNow();
            for (ServeChild child : children.reversed()) child.close();
        }
    }

    /**
     * A fresh JVM's first TLS handshakes can outlast the controller's first look on a busy machine: the
     * controller keeps looking every 2 s while an agent is silent. A merged list needs every node.
     */
    private static void awaitEveryNode(ControllerGrpc.ControllerBlockingStub csi, ServeChild controller) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                csi.listVolumes(ListVolumesRequest.getDefaultInstance());
                return;
            } catch (io.grpc.StatusRuntimeException e) {
                if (System.nanoTime() > deadline) fail("agents never all answered: " + e.getStatus() + "\n" + controller.stderr());
                Thread.sleep(250);
            }
        }
    }

    @Test
    void agentEndpointNeedsTls(@TempDir Path tmp) throws Exception {
        var e = assertThrows(IllegalStateException.class, () -> ServeChild.start(List.of("--mode", "node", "--node-id", "n1",
                "--engine", "dir", "--data-dir", tmp.toString(), "--agent-endpoint", "tcp://127.0.0.1:0")));
        assertTrue(e.getMessage().contains("--tls-cert"), e.getMessage());
    }

    private record Closing(ManagedChannel channel) implements AutoCloseable {
        @Override
        public void close() {
            channel.shutdownNow();
        }
    }
}
