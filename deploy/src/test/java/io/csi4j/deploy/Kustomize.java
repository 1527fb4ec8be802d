package io.csi4j.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * kustomize's build for the subset deploy/ uses (anything else in a kustomization fails to read, see
 * {@link Manifests.Kustomization}): resources in order (files, or directories holding a kustomization, built first);
 * then components (kustomize.config.k8s.io/v1alpha1 Component: their resources added, their patches and labels applied
 * to everything accumulated so far); then the kustomization's own strategic-merge patches, namespace (on every
 * namespaced object and on the ServiceAccount subjects of role bindings), labels (metadata only, or selectors and
 * templates too as each entry says) and image name/tag/digest rewrites in every container of a pod template.
 */
final class Kustomize {
    private Kustomize() {}

    /** The base, deploy/kubernetes. */
    static List<JsonNode> build() {
        return build(Manifests.DIR);
    }

    /** The kustomization in {@code dir}. */
    static List<JsonNode> build(Path dir) {
        var k = Manifests.kustomization(dir);
        if (!"kustomize.config.k8s.io/v1beta1".equals(k.apiVersion()) || !"Kustomization".equals(k.kind())) {
            throw new AssertionError(dir + ": not a kustomize.config.k8s.io/v1beta1 Kustomization: " + k);
        }
        List<ObjectNode> out = new ArrayList<>();
        accumulate(dir, k, out);
        return List.copyOf(out);
    }

    /** What a kustomization of one's own listing the base and these components renders. */
    static List<JsonNode> withComponents(Path base, List<Path> components) {
        List<ObjectNode> out = new ArrayList<>();
        for (JsonNode o : build(base)) out.add((ObjectNode) o.deepCopy());
        for (Path c : components) component(c, out);
        return List.copyOf(out);
    }

    private static void accumulate(Path dir, Manifests.Kustomization k, List<ObjectNode> out) {
        List<ObjectNode> mine = new ArrayList<>();
        for (String resource : k.resources() == null ? List.<String>of() : k.resources()) {
            Path p = dir.resolve(resource).normalize();
            if (Files.isDirectory(p)) {
                for (JsonNode o : build(p)) mine.add((ObjectNode) o.deepCopy());
            } else {
                for (Manifests.Doc d : Manifests.read(p)) mine.add(d.tree().deepCopy());
            }
        }
        for (String c : k.components() == null ? List.<String>of() : k.components()) component(dir.resolve(c).normalize(), mine);
        transform(dir, k, mine);
        out.addAll(mine);
    }

    private static void component(Path dir, List<ObjectNode> out) {
        var c = Manifests.kustomization(dir);
        if (!"kustomize.config.k8s.io/v1alpha1".equals(c.apiVersion()) || !"Component".equals(c.kind())) {
            throw new AssertionError(dir + ": not a kustomize.config.k8s.io/v1alpha1 Component: " + c);
        }
        // a component's resources join the parent's, and its transformers act on all of them
        for (String resource : c.resources() == null ? List.<String>of() : c.resources()) {
            for (Manifests.Doc d : Manifests.read(dir.resolve(resource).normalize())) out.add(d.tree().deepCopy());
        }
        for (String inner : c.components() == null ? List.<String>of() : c.components()) component(dir.resolve(inner).normalize(), out);
        transform(dir, c, out);
    }

    private static void transform(Path dir, Manifests.Kustomization k, List<ObjectNode> objects) {
        for (var patch : k.patches() == null ? List.<Manifests.Kustomization.Patch>of() : k.patches()) {
            for (JsonNode p : patchDocs(dir.resolve(patch.path()))) {
                ObjectNode target = objects.stream().filter(o -> sameObject(o, p)).findFirst()
                        .orElseThrow(() -> new AssertionError(dir.resolve(patch.path()) + ": patches " + p.path("kind").asText() + "/"
                                + p.path("metadata").path("name").asText() + ", which is not among the resources"));
                merge(target, p);
            }
        }
        for (ObjectNode o : objects) {
            String kind = o.path("kind").asText();
            ObjectNode meta = (ObjectNode) o.get("metadata");
            if (k.namespace() != null) {
                if (!Manifests.CLUSTER_SCOPED.contains(kind)) meta.put("namespace", k.namespace());
                if (kind.equals("RoleBinding") || kind.equals("ClusterRoleBinding")) {
                    for (JsonNode s : o.withArray("subjects")) {
                        if (s.path("kind").asText().equals("ServiceAccount")) ((ObjectNode) s).put("namespace", k.namespace());
                    }
                }
            }
            if (k.labels() != null) {
                for (var label : k.labels()) {
                    label.pairs().forEach((key, value) -> meta.with("labels").put(key, value));
                    boolean selectors = Boolean.TRUE.equals(label.includeSelectors());
                    boolean templates = selectors || Boolean.TRUE.equals(label.includeTemplates());
                    if (templates && o.path("spec").has("template")) {
                        label.pairs().forEach((key, value) -> ((ObjectNode) o.path("spec").path("template")).with("metadata").with("labels").put(key, value));
                    }
                    if (selectors) {
                        if (o.path("spec").path("selector").has("matchLabels")) {
                            label.pairs().forEach((key, value) -> ((ObjectNode) o.path("spec").path("selector").path("matchLabels")).put(key, value));
                        } else if (kind.equals("Service") && o.path("spec").has("selector")) {
                            label.pairs().forEach((key, value) -> ((ObjectNode) o.path("spec").path("selector")).put(key, value));
                        }
                    }
                }
            }
            if (k.images() != null && o.path("spec").path("template").path("spec").has("containers")) {
                for (String list : List.of("initContainers", "containers")) {
                    JsonNode containers = o.path("spec").path("template").path("spec").path(list);
                    if (!(containers instanceof ArrayNode array)) continue;
                    for (JsonNode c : array) {
                        String image = c.path("image").asText();
                        for (var rewrite : k.images()) {
                            String name = image.replaceFirst("[:@].*$", "");
                            if (!name.equals(rewrite.name())) continue;
                            String newName = rewrite.newName() != null ? rewrite.newName() : name;
                            String tag = image.contains(":") ? image.substring(image.indexOf(':')) : "";
                            if (rewrite.newTag() != null) tag = ":" + rewrite.newTag();
                            if (rewrite.digest() != null) tag = "@" + rewrite.digest();
                            ((ObjectNode) c).put("image", newName + tag);
                        }
                    }
                }
            }
        }
    }

    private static List<JsonNode> patchDocs(Path file) {
        List<JsonNode> docs = new ArrayList<>();
        try (var it = Manifests.YAML.readerFor(JsonNode.class).<JsonNode>readValues(Files.readString(file))) {
            while (it.hasNext()) {
                JsonNode d = it.next();
                if (d != null && !d.isNull() && !d.isEmpty()) docs.add(d);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return docs;
    }

    private static boolean sameObject(JsonNode o, JsonNode patch) {
        return o.path("apiVersion").equals(patch.path("apiVersion")) && o.path("kind").equals(patch.path("kind"))
                && o.path("metadata").path("name").equals(patch.path("metadata").path("name"))
                && o.path("metadata").path("namespace").asText("").equals(patch.path("metadata").path("namespace").asText(""));
    }

    /** The merge keys of the pod spec lists strategic merge patches merge by (the others are replaced whole). */
    private static final Map<String, String> MERGE_KEYS = Map.of("containers", "name", "initContainers", "name",
            "volumes", "name", "volumeMounts", "mountPath", "env", "name", "ports", "containerPort");

    /** Strategic merge: maps merged field by field, keyed lists element by key (new ones first, as kustomize puts them), the rest replaced. */
    static void merge(ObjectNode target, JsonNode patch) {
        for (Iterator<Map.Entry<String, JsonNode>> it = patch.fields(); it.hasNext(); ) {
            var e = it.next();
            JsonNode mine = target.get(e.getKey());
            JsonNode theirs = e.getValue();
            if (mine instanceof ObjectNode m && theirs.isObject()) {
                merge(m, theirs);
            } else if (mine instanceof ArrayNode list && theirs.isArray() && MERGE_KEYS.containsKey(e.getKey())) {
                String key = MERGE_KEYS.get(e.getKey());
                int front = 0;
                for (JsonNode element : theirs) {
                    JsonNode same = null;
                    for (JsonNode existing : list) if (existing.path(key).equals(element.path(key))) same = existing;
                    if (same instanceof ObjectNode s) merge(s, element); else list.insert(front++, element.deepCopy());
                }
            } else {
                target.set(e.getKey(), theirs.deepCopy());
            }
        }
    }
}
