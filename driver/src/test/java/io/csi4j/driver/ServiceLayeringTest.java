package io.csi4j.driver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Services map wire messages to the domain model and back, nothing else (DESIGN.md, "How a request flows"): they
 * read no catalog rows themselves. The model is plain records: no catalog, engine, gRPC or wire types.
 */
class ServiceLayeringTest {
    private static final Path ROOT = Path.of("src/main/java/io/csi4j/driver");

    @Test
    void servicesDoNotReadTheCatalog() throws IOException {
        assertEquals(List.of(), offences(List.of("csi", "addons", "cluster"), Pattern.compile("\\bio\\.csi4j\\.driver\\.catalog\\b")));
    }

    @Test
    void theModelDependsOnNothingBelowOrAbove() throws IOException {
        assertEquals(List.of(), offences(List.of("model"),
                Pattern.compile("\\bio\\.csi4j\\.(driver\\.(catalog|engine|os)|proto|sdk)\\b|\\bio\\.grpc\\b")));
    }

    private static List<String> offences(List<String> packages, Pattern forbidden) throws IOException {
        List<String> offences = new ArrayList<>();
        int files = 0;
        for (String pkg : packages) {
            try (Stream<Path> sources = Files.walk(ROOT.resolve(pkg))) {
                for (Path file : sources.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                    files++;
                    List<String> lines = Files.readAllLines(file);
                    for (int i = 0; i < lines.size(); i++) {
                        if (forbidden.matcher(lines.get(i)).find()) offences.add(file + ":" + (i + 1) + ": " + lines.get(i).strip());
                    }
                }
            }
        }
        assertTrue(files > 0, "found the sources of " + packages);
        return offences;
    }
}
