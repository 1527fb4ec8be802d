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
import java.util.List;
import java.util.TreeMap;
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
        List<JsonNode> rendered = Kustomize.build();
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
        Path out = Manifests.ROOT.resolve("deploy/target/rendered.yaml");
        Files.createDirectories(out.getParent());
        Files.writeString(out, yaml);
    }

    /** kubectl's kustomize (when this machine has kubectl) renders what ours does, object for object. */
    @Test
    void kubectlKustomizeAgrees() throws Exception {
        Path kubectl = null;
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            if (Files.isExecutable(Path.of(dir, "kubectl"))) kubectl = Path.of(dir, "kubectl");
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(kubectl != null, "kubectl is not installed: the Java rendering stands alone");
        Process p = new ProcessBuilder(kubectl.toString(), "kustomize", Manifests.DIR.toString()).redirectErrorStream(false).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), "kubectl kustomize: " + err);
        var theirs = byName(Manifests.parse(out, "kubectl kustomize").stream().map(Manifests.Doc::tree).toList());
        var ours = byName(Kustomize.build());
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
