package io.csi4j.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * kustomize's build for the subset deploy/kubernetes/kustomization.yaml uses (anything else in it fails to read,
 * see {@link Manifests.Kustomization}): resources in order; namespace on every namespaced object and on the
 * ServiceAccount subjects of role bindings; labels (metadata only, or selectors and templates too as each entry
 * says); image name/tag/digest rewrites in every container of a pod template.
 */
final class Kustomize {
    private Kustomize() {}

    static List<JsonNode> build() {
        var k = Manifests.kustomization();
        if (!"kustomize.config.k8s.io/v1beta1".equals(k.apiVersion()) || !"Kustomization".equals(k.kind())) {
            throw new AssertionError("not a kustomize.config.k8s.io/v1beta1 Kustomization: " + k);
        }
        List<JsonNode> out = new ArrayList<>();
        for (String resource : k.resources()) {
            for (Manifests.Doc d : Manifests.read(Manifests.DIR.resolve(resource))) {
                ObjectNode o = d.tree().deepCopy();
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
                out.add(o);
            }
        }
        return out;
    }
}
