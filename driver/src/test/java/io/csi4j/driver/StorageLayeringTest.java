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
 * Storage speaks storage (DESIGN.md, "How a request flows"): the catalog, the engines, the OS bindings and
 * their failure type know nothing of gRPC or of CSI's status codes. A failure there is a StorageException with
 * a reason; the CSI layer maps it ({@code csi/StorageStatus}).
 */
class StorageLayeringTest {
    private static final List<String> STORAGE = List.of("catalog", "engine", "os", "storage");
    /** An import or a fully qualified use, in code (comments count too: a doc that names gRPC codes is a smell). */
    private static final Pattern FORBIDDEN = Pattern.compile("\\bio\\.grpc\\.|\\bio\\.csi4j\\.sdk\\.CsiException\\b|\\bCsiException\\b");

    @Test
    void noStorageFileKnowsGrpcOrCsiException() throws IOException {
        Path root = Path.of("src/main/java/io/csi4j/driver");
        List<String> offences = new ArrayList<>();
        int files = 0;
        for (String pkg : STORAGE) {
            try (Stream<Path> sources = Files.walk(root.resolve(pkg))) {
                for (Path file : sources.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                    files++;
                    List<String> lines = Files.readAllLines(file);
                    for (int i = 0; i < lines.size(); i++) {
                        if (FORBIDDEN.matcher(lines.get(i)).find()) offences.add(file + ":" + (i + 1) + ": " + lines.get(i).strip());
                    }
                }
            }
        }
        assertTrue(files > 50, "the storage packages were found (" + files + " files under " + root.toAbsolutePath() + ")");
        assertEquals(List.of(), offences, "storage must throw StorageException and leave gRPC codes to csi/StorageStatus");
    }
}
