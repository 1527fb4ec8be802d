package io.csi4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.cli.testing.Cli;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code csi4j sanity}'s own flags: --call-timeout (and its old name --timeout), --keep-going, the exit codes in its help. */
class SanityCommandTest {

    @Test
    void takesACallTimeoutAndKeepGoing(@TempDir Path dir) {
        String endpoint = "unix://" + dir.resolve("nobody.sock");
        long start = System.nanoTime();
        var r = Cli.exec("sanity", "--endpoint", endpoint, "--call-timeout", "500ms", "--keep-going", "--focus", "^Identity/");
        assertTrue(System.nanoTime() - start < 20_000_000_000L, "the 500 ms call timeout bounds the wait for the plugin");
        assertEquals(1, r.exit(), r::toString);
        var old = Cli.exec("sanity", "--endpoint", endpoint, "--timeout", "1", "--focus", "^Identity/");
        assertEquals(1, old.exit(), old::toString);
        var bad = Cli.exec("sanity", "--endpoint", endpoint, "--call-timeout", "soon");
        assertEquals(2, bad.exit(), bad::toString);
    }

    @Test
    void helpNamesTheExitCodes() {
        var help = Cli.exec("sanity", "--help");
        assertEquals(0, help.exit());
        assertTrue(help.out().contains("3 the plugin stopped answering"), help.out());
        assertTrue(help.out().contains("--call-timeout") && help.out().contains("--keep-going"), help.out());
    }
}
