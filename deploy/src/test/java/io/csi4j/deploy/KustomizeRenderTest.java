package io.csi4j.deploy;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The kustomization renders: every rendered object is still its API type (strictly), namespaced where it must be,
 * with the image the kustomization names; written to deploy/target/rendered.yaml. Where kubectl is installed, its
 * own `kubectl kustomize` must render the same objects.
 */
class KustomizeRenderTest {
    /** Where every namespaced object goes (each says so itself: see kustomization.yaml on why not `namespace:`). */
    static final String NAMESPACE = "csi4j";

    @Test
    void rendersToValidObjectsInTheNamespace() throws IOException {
        rendersToValidObjects(Kustomize.build(), "rendered.yaml");
        rendersToValidObjects(Kustomize.build(Manifests.FULL), "rendered-full.yaml");
    }

    private static void rendersToValidObjects(List<JsonNode> rendered, String file) throws IOException {
        var k = Manifests.kustomization();
        StringBuilder yaml = new StringBuilder();
        for (JsonNode o : rendered) {
            String where = "rendered " + o.path("kind").asText() + "/" + o.path("metadata").path("name").asText();
            Manifests.typed(o, where);
            String ns = o.path("metadata").path("namespace").asText(null);
            if (Manifests.CLUSTER_SCOPED.contains(o.path("kind").asText())) assertNull(ns, where);
            else assertEquals(NAMESPACE, ns, where);
            for (JsonNode s : o.path("subjects")) assertEquals(NAMESPACE, s.path("namespace").asText(), where + " subject");
            yaml.append("---\n").append(Manifests.YAML.writeValueAsString(o).replaceFirst("^---\n", ""));
        }
        assertTrue(rendered.stream().anyMatch(o -> o.path("kind").asText().equals("Namespace")
                && o.path("metadata").path("name").asText().equals(NAMESPACE)), "the deployment's namespace is made by it");
        for (JsonNode o : rendered) {
            for (JsonNode c : o.path("spec").path("template").path("spec").path("containers")) {
                String image = c.path("image").asText();
                if (image.startsWith("localhost/csi4j")) assertEquals("localhost/csi4j:" + k.images().getFirst().newTag(), image);
            }
        }
        Path out = Manifests.ROOT.resolve("deploy/target").resolve(file);
        Files.createDirectories(out.getParent());
        Files.writeString(out, yaml);
    }

    /** What each optional part adds: objects of its own, and sidecar containers. */
    private static final Map<String, List<String>> PARTS = Map.of(
            "podmonitor", List.of("PodMonitor/csi4j"),
            "csi-addons", List.of("Role/csi4j-csi-addons", "RoleBinding/csi4j-csi-addons",
                    "Deployment/csi4j-controller container csi-addons", "DaemonSet/csi4j-node container csi-addons"),
            "group-snapshot", List.of("VolumeGroupSnapshotClass/csi4j-group-snapshot"));

    /**
     * Issue 29: the optional parts are kustomize components. The base has none of them; the base with any one
     * component has exactly that part more, every object still valid; deploy/full has them all; every file of a
     * component is used by it.
     */
    @Test
    void optionalPartsAreComponentsTheBaseLeavesOut() throws IOException {
        Set<String> base = parts(Kustomize.build());
        for (var part : PARTS.values()) for (String p : part) assertFalse(base.contains(p), "the base has " + p);
        Set<String> all = new TreeSet<>(base);
        for (Path component : Manifests.COMPONENTS) {
            String name = component.getFileName().toString();
            List<JsonNode> rendered = Kustomize.withComponents(Manifests.DIR, List.of(component));
            Manifests.docs(rendered, "base + " + name);   // every object its API type, strictly
            Set<String> added = new TreeSet<>(parts(rendered));
            added.removeAll(base);
            assertEquals(new TreeSet<>(PARTS.get(name)), added, name);
            all.addAll(added);
            var k = Manifests.kustomization(component);
            Set<String> used = new HashSet<>(k.resources() == null ? List.of() : k.resources());
            if (k.patches() != null) k.patches().forEach(patch -> used.add(patch.path()));
            try (Stream<Path> files = Files.list(component)) {
                for (Path f : files.filter(f -> f.toString().endsWith(".yaml") && !f.endsWith("kustomization.yaml")).toList()) {
                    assertTrue(used.contains(f.getFileName().toString()), f + " is not used by " + name);
                }
            }
        }
        assertEquals(PARTS.keySet(), Manifests.COMPONENTS.stream().map(c -> c.getFileName().toString()).collect(Collectors.toSet()));
        assertEquals(all, parts(Kustomize.build(Manifests.FULL)), "deploy/full is the base with every component");
    }

    /** Kind/name of every object, and kind/name container C of every container of a pod template. */
    private static Set<String> parts(List<JsonNode> rendered) {
        Set<String> parts = new TreeSet<>();
        for (JsonNode o : rendered) {
            String id = o.path("kind").asText() + "/" + o.path("metadata").path("name").asText();
            parts.add(id);
            for (JsonNode c : o.path("spec").path("template").path("spec").path("containers")) parts.add(id + " container " + c.path("name").asText());
        }
        return parts;
    }

    /** kubectl's kustomize (when this machine has kubectl) renders what ours does, object for object. */
    @Test
    void kubectlKustomizeAgrees() throws Exception {
        for (Path dir : List.of(Manifests.DIR, Manifests.FULL)) kubectlKustomizeAgrees(dir);
    }

    private static void kubectlKustomizeAgrees(Path dir) throws Exception {
        Path kubectl = null;
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            if (Files.isExecutable(Path.of(d, "kubectl"))) kubectl = Path.of(d, "kubectl");
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(kubectl != null, "kubectl is not installed: the Java rendering stands alone");
        Process p = new ProcessBuilder(kubectl.toString(), "kustomize", dir.toString()).redirectErrorStream(false).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), "kubectl kustomize: " + err);
        var theirs = byName(Manifests.parse(out, "kubectl kustomize").stream().map(Manifests.Doc::tree).toList());
        var ours = byName(Kustomize.build(dir));
        assertEquals(theirs.keySet(), ours.keySet());
        var json = JsonMapper.builder().enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS).build();
        List<String> differ = new ArrayList<>();
        for (String key : ours.keySet()) {
            Object a = json.treeToValue(ours.get(key), Object.class);
            Object b = json.treeToValue(theirs.get(key), Object.class);
            if (!json.writeValueAsString(a).equals(json.writeValueAsString(b))) {
                differ.add(key + "\n ours:    " + json.writeValueAsString(a) + "\n kubectl: " + json.writeValueAsString(b));
            }
        }
        assertTrue(differ.isEmpty(), String.join("\n", differ));
    }

    private static TreeMap<String, JsonNode> byName(List<JsonNode> docs) {
        TreeMap<String, JsonNode> map = new TreeMap<>();
        for (JsonNode d : docs) map.put(d.path("kind").asText() + "/" + d.path("metadata").path("namespace").asText("") + "/" + d.path("metadata").path("name").asText(), d);
        return map;
    }
}
