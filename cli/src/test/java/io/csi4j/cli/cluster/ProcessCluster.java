package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.fail;

import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.ListVolumesRequest;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.MutualTls;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A cluster of real {@code csi4j serve} processes on this machine: node agents ({@code --mode node --agent-endpoint})
 * on fixed 127.0.0.1 ports chosen up front (so an agent restarts on its own address, as a pod keeps its Service
 * name), each with its own data directory, and a controller ({@code --mode controller --nodes}) on UNIX sockets.
 * Any process can be killed, stopped, continued and restarted.
 */
final class ProcessCluster implements AutoCloseable {
    /** One agent: the name of its data directory, the node id it claims, its port, its flags and its process. */
    static final class AgentProcess {
        final String name;
        final String nodeId;
        final int port;
        final List<String> flags;
        ServeChild child;

        AgentProcess(String name, String nodeId, int port, List<String> flags) {
            this.name = name;
            this.nodeId = nodeId;
            this.port = port;
            this.flags = flags;
        }

        String address() { return "127.0.0.1:" + port; }

        /** Starts (or restarts, same data directory and port) its process. */
        AgentProcess start() throws IOException {
            child = ServeChild.start(flags);
            return this;
        }
    }

    final Path dir;
    final TestCertificates ca;
    final MutualTls agentTls;
    final MutualTls controllerTls;
    final Map<String, AgentProcess> agents = new LinkedHashMap<>();
    private List<String> controllerFlags;
    ServeChild controller;
    private final List<ManagedChannel> channels = new ArrayList<>();

    ProcessCluster(Path dir) throws Exception {
        this.dir = dir;
        this.ca = TestCertificates.authority(dir.resolve("pki"), "cluster");
        this.agentTls = ca.issue("agent");
        this.controllerTls = ca.issue("controller");
    }

    /** Agents for {@code nodeIds} (each its own data directory, dir engine, no pool image) and a controller for all of them. */
    static ProcessCluster start(Path dir, List<String> nodeIds, List<String> agentFlags, List<String> controllerFlags) throws Exception {
        var cluster = new ProcessCluster(dir);
        try {
            for (String id : nodeIds) cluster.addAgent(id, id, agentFlags).start();
            cluster.startController(controllerFlags);
            cluster.awaitEveryNode();
        } catch (Exception | Error e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /** Declares an agent (its port is reserved now, its process not started). */
    AgentProcess addAgent(String name, String nodeId, List<String> extra) throws IOException {
        return addAgent(name, nodeId, extra, agentTls);
    }

    AgentProcess addAgent(String name, String nodeId, List<String> extra, MutualTls tls) throws IOException {
        int port = freePort();
        List<String> flags = new ArrayList<>(List.of("--mode", "node", "--node-id", nodeId));
        if (!extra.contains("--engine")) flags.addAll(List.of("--engine", "dir"));
        flags.addAll(List.of("--data-dir", dir.resolve(name).toString(), "--agent-endpoint", "tcp://127.0.0.1:" + port,
                "--tls-cert", tls.certificate().toString(), "--tls-key", tls.privateKey().toString(), "--tls-ca", tls.ca().toString()));
        flags.addAll(extra);
        var agent = new AgentProcess(name, nodeId, port, flags);
        agents.put(name, agent);
        return agent;
    }

    AgentProcess agent(String name) {
        return agents.get(name);
    }

    void startController(List<String> extra) throws IOException {
        controllerFlags = new ArrayList<>(List.of("--mode", "controller", "--data-dir", dir.resolve("controller").toString(),
                "--nodes", String.join(",", agents.values().stream().map(AgentProcess::address).toList()),
                "--tls-cert", controllerTls.certificate().toString(), "--tls-key", controllerTls.privateKey().toString(),
                "--tls-ca", controllerTls.ca().toString()));
        controllerFlags.addAll(extra);
        controller = ServeChild.start(controllerFlags);
    }

    /** Starts the controller again with the same flags (after a kill). */
    void restartController() throws IOException {
        controller = ServeChild.start(controllerFlags);
    }

    String controllerSocket() {
        return "unix://" + dir.resolve("controller").resolve("csi.sock");
    }

    ManagedChannel controllerChannel() {
        var channel = Channels.connect(Endpoint.parse(controllerSocket()));
        channels.add(channel);
        return channel;
    }

    /** Waits (bounded) until a merged list succeeds: every agent has said which node it is. */
    void awaitEveryNode() throws InterruptedException {
        var csi = ControllerGrpc.newBlockingStub(controllerChannel());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                csi.withDeadlineAfter(10, TimeUnit.SECONDS).listVolumes(ListVolumesRequest.getDefaultInstance());
                return;
            } catch (io.grpc.StatusRuntimeException e) {
                if (System.nanoTime() > deadline) fail("agents never all answered: " + e.getStatus() + "\n" + controller.stderr());
                Thread.sleep(250);
            }
        }
    }

    static int freePort() throws IOException {
        try (var probe = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return probe.getLocalPort();
        }
    }

    @Override
    public void close() throws InterruptedException {
        channels.forEach(ManagedChannel::shutdownNow);
        if (controller != null) controller.close();
        for (AgentProcess agent : agents.values()) {
            if (agent.child == null) continue;
            if (agent.child.alive()) {
                try {
                    agent.child.signal("CONT");  // a stopped process does not see SIGTERM
                } catch (IOException ignored) {
                    // gone already
                }
            }
            agent.child.close();
            // an agent with a pool image (--pool-size) that was killed left the pool mounted
            Path pool = dir.resolve(agent.name).resolve("pool");
            try {
                if (io.csi4j.driver.os.MountTable.read().isMountPoint(pool)) io.csi4j.driver.os.Mounts.unmount(pool);
            } catch (RuntimeException e) {
                System.err.println("could not unmount " + pool + ": " + e);
            }
        }
    }
}
