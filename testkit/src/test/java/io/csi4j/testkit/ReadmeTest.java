package io.csi4j.testkit;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The README lists every test of the suite under its Service/Rpc heading. */
class ReadmeTest {

    @Test
    void listsEveryTest() throws Exception {
        String readme = Files.readString(Path.of("README.md"));
        for (String name : SanityRunner.testNames()) {
            int cut = name.indexOf('/', name.indexOf('/') + 1);
            String heading = "- **" + name.substring(0, cut) + "**: ";
            int at = readme.indexOf(heading);
            assertTrue(at >= 0, () -> "README.md has no entry " + heading);
            String line = readme.substring(at, readme.indexOf('\n', at));
            String behaviour = name.substring(cut + 1);
            assertTrue(line.contains(": " + behaviour + ";") || line.contains("; " + behaviour + ";") || line.endsWith(" " + behaviour),
                    () -> "README.md does not list " + name);
        }
    }
}
