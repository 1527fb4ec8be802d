package io.csi4j.deploy;

import static io.csi4j.deploy.PodTemplates.*;
import static org.junit.jupiter.api.Assertions.*;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Service;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every socket followed from the container that serves it to each container that dials it: same volume, same path
 * inside it; the registrar's kubelet path is where that volume lies on the host; the controller's --agents names
 * the headless Service and its port, which leads to the agents' endpoint; every probe port is one a container
 * serves; every TLS file the containers name is in the Secret mounted there.
 */
class SocketPathTest {
    private final List<Manifests.Doc> docs = Manifests.load();

    /** Which argument of which sidecar dials which of csi4j's sockets. */
    private static final Map<String, String[]> DIALS = Map.of(
            "csi-provisioner", new String[] {"--csi-address", "--endpoint"},
            "csi-snapshotter", new String[] {"--csi-address", "--endpoint"},
            "csi-resizer", new String[] {"--csi-address", "--endpoint"},
            "liveness-probe", new String[] {"--csi-address", "--endpoint"},
            "node-driver-registrar", new String[] {"--csi-address", "--endpoint"},
            "csi-addons", new String[] {"--csi-addons-address", "--csi-addons-endpoint"});

    @Test
    void everySidecarDialsTheSocketCsi4jServes() {
        int followed = 0;
        for (var w : PodTemplates.workloads(docs)) {
            Container csi4j = w.container("csi4j");
            for (Container c : w.pod().getContainers()) {
                String[] dial = DIALS.get(c.getName());
                if (dial == null) continue;
                String dialed = unixPath(arg(c, dial[0]).orElseThrow(() -> new AssertionError(w.name() + "/" + c.getName() + " has no " + dial[0])));
                String served = unixPath(arg(csi4j, dial[1]).orElseThrow(() -> new AssertionError(w.name() + "/csi4j has no " + dial[1])));
                Resolved at = resolve(c, dialed);
                Resolved from = resolve(csi4j, served);
                assertEquals(from.mount().getName(), at.mount().getName(),
                        w.name() + ": " + c.getName() + " dials " + dialed + " in volume " + at.mount().getName()
                                + " but csi4j serves " + served + " in volume " + from.mount().getName());
                assertEquals(from.rest(), at.rest(), w.name() + ": " + c.getName() + " dials " + dialed + ", csi4j serves " + served);
                assertNotNull(w.volume(at.mount().getName()), w.name());
                followed++;
            }
        }
        assertEquals(8, followed, "controller: provisioner, snapshotter, resizer, liveness probe, csi-addons; node: registrar, liveness probe, csi-addons");
    }

    @Test
    void registrarTellsKubeletWhereTheSocketIsOnTheHost() {
        var node = PodTemplates.workload(docs, "csi4j-node");
        Container registrar = node.container("node-driver-registrar");
        Container csi4j = node.container("csi4j");
        Resolved socket = resolve(csi4j, unixPath(arg(csi4j, "--endpoint").orElseThrow()));
        var hostPath = node.volume(socket.mount().getName()).getHostPath();
        assertNotNull(hostPath, "the node socket's volume is a hostPath: kubelet dials it from the host");
        assertEquals(hostPath.getPath() + "/" + socket.rest(), arg(registrar, "--kubelet-registration-path").orElseThrow());
        assertEquals("/var/lib/kubelet/plugins/local.csi4j.io", hostPath.getPath(), "kubelet's plugin directory for the driver name");
        Resolved registration = resolve(registrar, "/registration/x");
        assertEquals("/var/lib/kubelet/plugins_registry", node.volume(registration.mount().getName()).getHostPath().getPath());
    }

    @Test
    void controllerReachesTheAgentsThroughTheHeadlessService() {
        Container controller = PodTemplates.workload(docs, "csi4j-controller").container("csi4j");
        String agents = arg(controller, "--agents").orElseThrow();
        String host = agents.substring(0, agents.lastIndexOf(':'));
        int port = Integer.parseInt(agents.substring(agents.lastIndexOf(':') + 1));
        Service service = Manifests.all(docs, Service.class).stream()
                .filter(s -> host.startsWith(s.getMetadata().getName() + ".")).findFirst()
                .orElseThrow(() -> new AssertionError("--agents " + agents + " names no Service of the deployment"));
        assertEquals(service.getMetadata().getName() + ".$(NAMESPACE).svc", host, "the Service in the controller's own namespace");
        assertTrue(controller.getEnv().stream().anyMatch(e -> e.getName().equals("NAMESPACE")
                && e.getValueFrom().getFieldRef().getFieldPath().equals("metadata.namespace")));
        assertEquals("None", service.getSpec().getClusterIP(), "headless: one address per agent pod");
        var servicePort = service.getSpec().getPorts().stream().filter(p -> p.getPort() == port).findFirst()
                .orElseThrow(() -> new AssertionError("Service " + service.getMetadata().getName() + " has no port " + port));
        var node = PodTemplates.workload(docs, "csi4j-node");
        Container agent = node.container("csi4j");
        var containerPort = agent.getPorts().stream().filter(p -> p.getName().equals(servicePort.getTargetPort().getStrVal())).findFirst().orElseThrow();
        String endpoint = arg(agent, "--agent-endpoint").orElseThrow();
        assertEquals(containerPort.getContainerPort(), Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1)));
        assertEquals(service.getSpec().getSelector(), Map.of("app.kubernetes.io/name", "csi4j", "app.kubernetes.io/component", "node"));
    }

    @Test
    void probesAndMetricsPointAtPortsSomeContainerServes() {
        for (var w : PodTemplates.workloads(docs)) {
            for (Container c : w.pod().getContainers()) {
                if (c.getLivenessProbe() == null || c.getLivenessProbe().getHttpGet() == null) continue;
                var port = c.getLivenessProbe().getHttpGet().getPort();
                String portName = port.getStrVal();
                // a named port of this container, served by some container of the pod (the pod shares one network)
                var named = c.getPorts().stream().filter(p -> p.getName().equals(portName)).findFirst()
                        .orElseThrow(() -> new AssertionError(w.name() + "/" + c.getName() + ": probe port " + portName + " not declared"));
                int number = named.getContainerPort();
                boolean served = w.pod().getContainers().stream().anyMatch(s -> arg(s, "--http-endpoint").map(e -> e.endsWith(":" + number)).orElse(false)
                        || arg(s, "--metrics-address").map(e -> e.endsWith(":" + number)).orElse(false));
                assertTrue(served, w.name() + "/" + c.getName() + ": nothing serves port " + number);
            }
            Container csi4j = w.container("csi4j");
            String metrics = arg(csi4j, "--metrics-address").orElseThrow();
            assertTrue(csi4j.getPorts().stream().anyMatch(p -> p.getName().equals("metrics") && metrics.endsWith(":" + p.getContainerPort())), w.name());
        }
    }

    @Test
    void tlsFilesAreInTheSecretMountedThere() {
        for (var w : PodTemplates.workloads(docs)) {
            Container csi4j = w.container("csi4j");
            for (String flag : List.of("--tls-cert", "--tls-key", "--tls-ca")) {
                Resolved file = resolve(csi4j, arg(csi4j, flag).orElseThrow());
                var secret = w.volume(file.mount().getName()).getSecret();
                assertNotNull(secret, w.name() + ": " + flag + " is not in a Secret volume");
                assertTrue(List.of("tls.crt", "tls.key", "ca.crt").contains(file.rest()), flag + " -> " + file.rest());
                assertEquals(w.name().equals("csi4j-node") ? "csi4j-agent-tls" : "csi4j-controller-tls", secret.getSecretName());
            }
        }
    }
}
