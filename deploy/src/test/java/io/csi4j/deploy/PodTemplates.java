package io.csi4j.deploy;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The pod templates of the workloads, and what their containers' arguments and mounts say. */
final class PodTemplates {
    private PodTemplates() {}

    record Workload(String name, PodSpec pod) {
        Container container(String name) {
            return pod.getContainers().stream().filter(c -> c.getName().equals(name)).findFirst()
                    .orElseThrow(() -> new AssertionError(this.name + " has no container " + name));
        }

        Volume volume(String name) {
            return pod.getVolumes().stream().filter(v -> v.getName().equals(name)).findFirst()
                    .orElseThrow(() -> new AssertionError(this.name + " has no volume " + name));
        }
    }

    static List<Workload> workloads(List<Manifests.Doc> docs) {
        List<Workload> all = new ArrayList<>();
        for (Deployment d : Manifests.all(docs, Deployment.class)) all.add(new Workload(d.getMetadata().getName(), d.getSpec().getTemplate().getSpec()));
        for (DaemonSet d : Manifests.all(docs, DaemonSet.class)) all.add(new Workload(d.getMetadata().getName(), d.getSpec().getTemplate().getSpec()));
        return all;
    }

    static Workload workload(List<Manifests.Doc> docs, String name) {
        return workloads(docs).stream().filter(w -> w.name().equals(name)).findFirst().orElseThrow();
    }

    /** The value of {@code --name=value} (or {@code --name value}) in a container's arguments. */
    static Optional<String> arg(Container c, String name) {
        List<String> args = c.getArgs();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.startsWith(name + "=")) return Optional.of(a.substring(name.length() + 1));
            if (a.equals(name) && i + 1 < args.size() && !args.get(i + 1).startsWith("-")) return Optional.of(args.get(i + 1));
        }
        return Optional.empty();
    }

    /** A path inside a container: the mount that holds it (longest mount path that is a prefix) and the rest. */
    record Resolved(VolumeMount mount, String rest) {}

    static Resolved resolve(Container c, String path) {
        VolumeMount best = null;
        for (VolumeMount m : c.getVolumeMounts()) {
            String mp = m.getMountPath().endsWith("/") ? m.getMountPath() : m.getMountPath() + "/";
            if (path.startsWith(mp) && (best == null || m.getMountPath().length() > best.getMountPath().length())) best = m;
        }
        if (best == null) throw new AssertionError("container " + c.getName() + ": no volume mount holds " + path);
        String mp = best.getMountPath().endsWith("/") ? best.getMountPath() : best.getMountPath() + "/";
        return new Resolved(best, path.substring(mp.length()));
    }

    static String unixPath(String endpoint) {
        if (endpoint.startsWith("unix://")) return endpoint.substring("unix://".length());
        if (endpoint.startsWith("/")) return endpoint;
        throw new AssertionError("not a UNIX socket endpoint: " + endpoint);
    }
}
