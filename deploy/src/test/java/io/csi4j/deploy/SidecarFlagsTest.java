package io.csi4j.deploy;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.cli.Main;
import io.fabric8.kubernetes.api.model.Container;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every argument a container gets is one its program has: a sidecar's flags and feature gates against the
 * committed list for the exact release it pins (deploy/sidecar-flags, README there says where the lists come from),
 * csi4j's own against its command line (picocli parses them as `csi4j` would).
 */
class SidecarFlagsTest {
    private static final Path FLAGS = Manifests.ROOT.resolve("deploy/sidecar-flags");

    record Known(Set<String> flags, Set<String> gates) {}

    static Known known(String image) throws IOException {
        String name = image.substring(image.lastIndexOf('/') + 1).replace(':', '-');
        Path file = FLAGS.resolve(name + ".txt");
        assertTrue(Files.isRegularFile(file), "no flag list " + file + " for the pinned image " + image
                + " (a new or bumped sidecar needs its list: deploy/sidecar-flags/README.md)");
        Set<String> flags = new HashSet<>();
        Set<String> gates = new HashSet<>();
        for (String line : Files.readAllLines(file)) {
            if (line.isBlank() || line.startsWith("#")) continue;
            if (line.startsWith("feature-gate ")) gates.add(line.substring("feature-gate ".length()).strip());
            else flags.add(line.strip());
        }
        return new Known(flags, gates);
    }

    @Test
    void everySidecarFlagIsOneItsPinnedReleaseHas() throws IOException {
        List<String> wrong = new ArrayList<>();
        int checked = 0;
        for (var w : PodTemplates.workloads(Manifests.load())) {
            for (Container c : w.pod().getContainers()) {
                if (c.getName().equals("csi4j")) continue;
                String image = c.getImage();
                assertTrue(image.matches(".+:v\\d+\\.\\d+\\.\\d+"), w.name() + "/" + c.getName() + " pins no release: " + image);
                Known known = known(image);
                for (String arg : c.getArgs()) {
                    checked++;
                    if (!arg.startsWith("-")) {
                        wrong.add(w.name() + "/" + c.getName() + ": positional argument " + arg);
                        continue;
                    }
                    String flag = "--" + arg.replaceFirst("^-+", "").split("=", 2)[0];
                    if (!known.flags().contains(flag)) wrong.add(w.name() + "/" + c.getName() + " (" + image + "): " + flag);
                    if (flag.equals("--feature-gates")) {
                        for (String gate : arg.split("=", 2)[1].split(",")) {
                            String[] kv = gate.split("=");
                            if (!known.gates().contains(kv[0])) wrong.add(w.name() + "/" + c.getName() + ": feature gate " + kv[0]);
                            if (kv.length != 2 || !Set.of("true", "false").contains(kv[1])) wrong.add(w.name() + "/" + c.getName() + ": gate " + gate);
                        }
                    }
                }
            }
        }
        assertTrue(wrong.isEmpty(), "flags the pinned releases do not have:\n" + String.join("\n", wrong));
        assertTrue(checked > 40, "arguments checked: " + checked);
    }

    @Test
    void everyPinnedImageHasAListAndEveryListAnImage() throws IOException {
        Set<String> pinned = new HashSet<>();
        for (var w : PodTemplates.workloads(Manifests.load())) {
            for (Container c : w.pod().getContainers()) {
                if (c.getName().equals("csi4j")) continue;
                pinned.add(c.getImage().substring(c.getImage().lastIndexOf('/') + 1).replace(':', '-') + ".txt");
                known(c.getImage());
            }
        }
        try (var files = Files.list(FLAGS)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".txt")).toList()) {
                assertTrue(pinned.contains(f.getFileName().toString()), f + " lists the flags of an image no manifest pins");
            }
        }
    }

    @Test
    void csi4jArgumentsAreItsOwnCommandLine() {
        for (var w : PodTemplates.workloads(Manifests.load())) {
            Container c = w.container("csi4j");
            assertTrue(c.getImage().contains("csi4j"), c.getImage());
            String[] args = c.getArgs().toArray(String[]::new);
            var sink = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
            CommandLine cl = Main.commandLine(sink, sink, args);
            try {
                var parsed = cl.parseArgs(args);
                assertTrue(parsed.hasSubcommand() && parsed.subcommand().commandSpec().name().equals("serve"), w.name());
            } catch (CommandLine.ParameterException e) {
                fail(w.name() + "/csi4j: " + e.getMessage());
            }
        }
    }
}
