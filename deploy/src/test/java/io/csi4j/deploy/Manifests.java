package io.csi4j.deploy;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.VolumeAttributesClass;
import io.fabric8.openshift.api.model.monitoring.v1.PodMonitor;
import io.fabric8.volumesnapshot.api.model.VolumeSnapshotClass;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The manifests of deploy/kubernetes as the Kubernetes API types of fabric8's model (a Java model generated from the
 * Kubernetes OpenAPI), strictly: a field the type does not have is an error (fabric8 keeps unknown fields in
 * additionalProperties; every one found is reported with its path), and every value written must read back
 * unchanged (nothing coerced or dropped). Types fabric8 does not model (VolumeGroupSnapshotClass, the
 * Kustomization itself) are records here, read with unknown fields failing.
 */
final class Manifests {
    static final Path ROOT = root();
    static final Path DIR = ROOT.resolve("deploy/kubernetes");
    static final ObjectMapper YAML = YAMLMapper.builder().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES).build();
    static final ObjectMapper JSON = new ObjectMapper();

    /** Kinds without a namespace (kustomize's namespace and the API server leave them alone). */
    static final Set<String> CLUSTER_SCOPED = Set.of("Namespace", "ClusterRole", "ClusterRoleBinding", "CSIDriver",
            "StorageClass", "VolumeSnapshotClass", "VolumeGroupSnapshotClass", "VolumeAttributesClass");

    static final Map<String, Class<?>> TYPES = Map.ofEntries(
            Map.entry("v1/Namespace", Namespace.class),
            Map.entry("v1/ServiceAccount", ServiceAccount.class),
            Map.entry("v1/Service", Service.class),
            Map.entry("v1/Secret", Secret.class),
            Map.entry("v1/PersistentVolumeClaim", PersistentVolumeClaim.class),
            Map.entry("v1/Pod", Pod.class),
            Map.entry("apps/v1/Deployment", Deployment.class),
            Map.entry("apps/v1/DaemonSet", DaemonSet.class),
            Map.entry("rbac.authorization.k8s.io/v1/ClusterRole", ClusterRole.class),
            Map.entry("rbac.authorization.k8s.io/v1/ClusterRoleBinding", ClusterRoleBinding.class),
            Map.entry("rbac.authorization.k8s.io/v1/Role", Role.class),
            Map.entry("rbac.authorization.k8s.io/v1/RoleBinding", RoleBinding.class),
            Map.entry("storage.k8s.io/v1/CSIDriver", CSIDriver.class),
            Map.entry("storage.k8s.io/v1/StorageClass", StorageClass.class),
            Map.entry("storage.k8s.io/v1/VolumeAttributesClass", VolumeAttributesClass.class),
            Map.entry("snapshot.storage.k8s.io/v1/VolumeSnapshotClass", VolumeSnapshotClass.class),
            Map.entry("groupsnapshot.storage.k8s.io/v1/VolumeGroupSnapshotClass", VolumeGroupSnapshotClass.class),
            Map.entry("monitoring.coreos.com/v1/PodMonitor", PodMonitor.class));

    /** groupsnapshot.storage.k8s.io/v1 VolumeGroupSnapshotClass (external-snapshotter v8.6+ CRD), every field. */
    @JsonIgnoreProperties(ignoreUnknown = false)
    record VolumeGroupSnapshotClass(String apiVersion, String kind, ObjectMeta metadata, String driver,
                                    String deletionPolicy, Map<String, String> parameters) {}

    /** The subset of kustomize.config.k8s.io/v1beta1 Kustomization this deployment uses; anything else is an error. */
    @JsonIgnoreProperties(ignoreUnknown = false)
    record Kustomization(String apiVersion, String kind, String namespace, List<Label> labels, List<String> resources,
                         List<String> components, List<Patch> patches, List<Image> images) {
        /** A strategic-merge patch file (its target named by its own kind and name). */
        @JsonIgnoreProperties(ignoreUnknown = false)
        record Patch(String path) {}

        @JsonIgnoreProperties(ignoreUnknown = false)
        record Label(Map<String, String> pairs, Boolean includeSelectors, Boolean includeTemplates) {}

        @JsonIgnoreProperties(ignoreUnknown = false)
        record Image(String name, String newName, String newTag, String digest) {}
    }

    /** One YAML document: where it came from, its tree, and the typed object it reads as. */
    record Doc(String source, JsonNode tree, Object typed) {
        String kind() {
            return tree.path("kind").asText();
        }

        String name() {
            return tree.path("metadata").path("name").asText();
        }

        @Override
        public String toString() {
            return kind() + "/" + name() + " (" + source + ")";
        }
    }

    private Manifests() {}

    static Kustomization kustomization() {
        return kustomization(DIR);
    }

    static Kustomization kustomization(Path dir) {
        try {
            return YAML.readValue(dir.resolve("kustomization.yaml").toFile(), Kustomization.class);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** deploy/full: the base and every optional component. */
    static final Path FULL = ROOT.resolve("deploy/full");
    /** The optional parts, each a kustomize Component. */
    static final List<Path> COMPONENTS = List.of("podmonitor", "csi-addons", "group-snapshot").stream()
            .map(c -> DIR.resolve("components").resolve(c)).toList();

    /** Every object of the full deployment (the base and every component, rendered), typed and checked. */
    static List<Doc> load() {
        return docs(Kustomize.build(FULL), "deploy/full");
    }

    /** Rendered objects as documents, each typed and checked. */
    static List<Doc> docs(List<JsonNode> rendered, String source) {
        List<Doc> docs = new ArrayList<>();
        for (JsonNode tree : rendered) {
            String where = source + ": " + tree.path("kind").asText() + "/" + tree.path("metadata").path("name").asText();
            docs.add(new Doc(where, tree, typed(tree, where)));
        }
        return docs;
    }

    static List<Doc> read(Path file) {
        try {
            return parse(Files.readString(file), ROOT.relativize(file.toAbsolutePath().normalize()).toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<Doc> parse(String yaml, String source) throws IOException {
        List<Doc> docs = new ArrayList<>();
        try (MappingIterator<JsonNode> it = YAML.readerFor(JsonNode.class).readValues(yaml)) {
            int n = 0;
            while (it.hasNext()) {
                JsonNode tree = it.next();
                n++;
                if (tree == null || tree.isNull() || tree.isEmpty()) continue;
                String where = source + "#" + n;
                docs.add(new Doc(where, tree, typed(tree, where)));
            }
        }
        return docs;
    }

    /** The tree as its API type; unknown fields, or values that do not read back the same, are errors. */
    static Object typed(JsonNode tree, String where) {
        String key = tree.path("apiVersion").asText() + "/" + tree.path("kind").asText();
        Class<?> type = TYPES.get(key);
        if (type == null) throw new AssertionError(where + ": no API type known for " + key);
        Object value;
        try {
            value = YAML.treeToValue(tree, type);
        } catch (IOException e) {
            throw new AssertionError(where + ": does not read as " + type.getSimpleName() + ": " + e.getMessage(), e);
        }
        List<String> unknown = new ArrayList<>();
        unknownFields(value, "", unknown);
        if (!unknown.isEmpty()) throw new AssertionError(where + ": fields " + key + " does not have: " + unknown);
        List<String> changed = new ArrayList<>();
        sameLeaves(tree, JSON.valueToTree(value), "", changed);
        if (!changed.isEmpty()) throw new AssertionError(where + ": values that do not read back as written: " + changed);
        if (value instanceof HasMetadata m && (m.getMetadata() == null || m.getMetadata().getName() == null)) {
            throw new AssertionError(where + ": no metadata.name");
        }
        return value;
    }

    /** fabric8 puts fields its type lacks in additionalProperties: walk the object and report each with its path. */
    static void unknownFields(Object value, String path, List<String> found) {
        if (value == null) return;
        if (value instanceof Collection<?> c) {
            int i = 0;
            for (Object o : c) unknownFields(o, path + "[" + i++ + "]", found);
            return;
        }
        if (value instanceof Map<?, ?> m) {
            for (var e : m.entrySet()) unknownFields(e.getValue(), path + "." + e.getKey(), found);
            return;
        }
        Class<?> type = value.getClass();
        if (!type.getName().startsWith("io.fabric8.") || type.isEnum()) return;
        for (Method getter : type.getMethods()) {
            if (getter.getParameterCount() != 0 || Modifier.isStatic(getter.getModifiers())) continue;
            String name = getter.getName();
            if (!name.startsWith("get") || name.equals("getClass")) continue;
            Object child;
            try {
                child = getter.invoke(value);
            } catch (IllegalAccessException | InvocationTargetException e) {
                continue;
            }
            if (name.equals("getAdditionalProperties")) {
                if (child instanceof Map<?, ?> extra && !extra.isEmpty()) {
                    for (Object k : extra.keySet()) found.add((path.isEmpty() ? "" : path + ".") + k);
                }
                continue;
            }
            String field = Character.toLowerCase(name.charAt(3)) + name.substring(4);
            unknownFields(child, path.isEmpty() ? field : path + "." + field, found);
        }
    }

    /** Every scalar written in the manifest must be in the typed object's own serialization, equal as text. */
    static void sameLeaves(JsonNode written, JsonNode read, String path, List<String> changed) {
        if (written.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = written.fields(); it.hasNext(); ) {
                var e = it.next();
                JsonNode other = read == null ? null : read.get(e.getKey());
                String p = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
                if (other == null || other.isNull()) {
                    if (!(e.getValue().isContainerNode() && e.getValue().isEmpty())) changed.add(p + " (dropped)");
                    continue;
                }
                sameLeaves(e.getValue(), other, p, changed);
            }
        } else if (written.isArray()) {
            if (read == null || !read.isArray() || read.size() != written.size()) {
                changed.add(path + " (list changed)");
                return;
            }
            for (int i = 0; i < written.size(); i++) sameLeaves(written.get(i), read.get(i), path + "[" + i + "]", changed);
        } else if (read == null || !written.asText().equals(read.asText())) {
            changed.add(path + ": " + written.asText() + " -> " + (read == null ? "null" : read.asText()));
        }
    }

    static <T> List<T> all(List<Doc> docs, Class<T> type) {
        return docs.stream().map(Doc::typed).filter(type::isInstance).map(type::cast).toList();
    }

    private static Path root() {
        String given = System.getenv("CSI4J_REPO_ROOT");
        if (given != null && Files.isDirectory(Path.of(given, "deploy/kubernetes"))) return Path.of(given);
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("deploy/kubernetes"))) dir = dir.getParent();
        if (dir == null) throw new IllegalStateException("no deploy/kubernetes above " + Path.of("").toAbsolutePath());
        return dir;
    }
}
