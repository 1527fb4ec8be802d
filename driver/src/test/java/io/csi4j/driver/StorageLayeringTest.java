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
 * Storage speaks storage (docs/design.md, "Errors at the edge"): the catalog, the engines, the OS bindings and
 * their failure type know nothing of gRPC or of CSI's status codes. A failure there is a StorageException with
 * a reason; the CSI layer maps it ({@code csi/StorageStatus}). Services map wire messages to the domain model
 * and back, nothing else: they read no catalog rows themselves, and the model is plain records.
 */
class StorageLayeringTest {
    private static final Path ROOT = Path.of("src/main/java/io/csi4j/driver");
    private static final List<String> STORAGE = List.of("catalog", "engine", "os", "storage");
    /** An import or a fully qualified use, in code (comments count too: a doc that names gRPC codes is a smell). */
    private static final Pattern FORBIDDEN = Pattern.compile("\\bio\\.grpc\\.|\\bio\\.csi4j\\.sdk\\.CsiException\\b|\\bCsiException\\b");

    @Test
    void noStorageFileKnowsGrpcOrCsiException() throws IOException {
        List<String> offences = new ArrayList<>();
        int files = scan(STORAGE, FORBIDDEN, offences);
        assertTrue(files > 50, "the storage packages were found (" + files + " files under " + ROOT.toAbsolutePath() + ")");
        assertEquals(List.of(), offences, "storage must throw StorageException and leave gRPC codes to csi/StorageStatus");
    }

    @Test
    void servicesDoNotReadTheCatalog() throws IOException {
        List<String> offences = new ArrayList<>();
        assertTrue(scan(List.of("csi", "addons", "cluster"), Pattern.compile("\\bio\\.csi4j\\.driver\\.catalog\\b"), offences) > 0);
        assertEquals(List.of(), offences, "services map wire <-> model; the domain reads the catalog");
    }

    @Test
    void theModelDependsOnNothingBelowOrAbove() throws IOException {
        List<String> offences = new ArrayList<>();
        assertTrue(scan(List.of("model"), Pattern.compile(
                "\\bio\\.csi4j\\.(driver\\.(catalog|engine|os)|proto|sdk)\\b|\\bio\\.grpc\\b"), offences) > 0);
        assertEquals(List.of(), offences, "the model is plain records");
    }

    /** Adds every line of the packages' sources that {@code forbidden} finds to {@code offences}; the files read. */
    private static int scan(List<String> packages, Pattern forbidden, List<String> offences) throws IOException {
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
        return files;
    }
}
