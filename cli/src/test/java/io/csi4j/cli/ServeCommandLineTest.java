package io.csi4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** `serve` is parsed by a tree with only itself under the root (start-up time): same name, help, errors. */
class ServeCommandLineTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return Main.run(new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), args);
    }

    @Test
    void helpNamesTheFullCommandAndEveryOption() {
        assertEquals(0, run("serve", "--help"));
        String help = out.toString(StandardCharsets.UTF_8);
        assertTrue(help.contains("Usage: csi4j serve"), help);
        assertTrue(help.contains("Default: 10%") && !help.contains("%%"), help);
        assertTrue(!err.toString(StandardCharsets.UTF_8).contains("Could not format"), err.toString(StandardCharsets.UTF_8));
        for (String option : new String[] {"--data-dir", "--node-id", "--engine", "--pool-size", "--pool-reserve", "--csi-addons-endpoint"}) {
            assertTrue(help.contains(option), option + " missing from\n" + help);
        }
    }

    @Test
    void aBadFlagStillExitsTwoNamingIt() {
        assertEquals(2, run("serve", "--no-such-flag"));
        String shown = err.toString(StandardCharsets.UTF_8);
        assertTrue(shown.contains("--no-such-flag"), shown);
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"10%, 0, 10", "20 %, 0, 20", "0%, 0, 0", "5Gi, 5368709120, 0", "0, 0, 0"})
    void poolReserveIsAShareOrASize(String flag, long bytes, int percent) {
        ServeCommand serve = new ServeCommand();
        serve.poolReserve = flag;
        assertEquals(new io.csi4j.driver.engine.PoolReserve(bytes, percent), serve.poolReserve());
    }

    @Test
    void aBadPoolReserveExitsTwoBeforeAnythingIsMade(@org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) {
        for (String bad : new String[] {"95%", "ten", "-1Gi"}) {
            assertEquals(2, run("serve", "--data-dir", tmp.resolve("data").toString(), "--pool-reserve", bad), bad);
        }
        assertTrue(java.nio.file.Files.notExists(tmp.resolve("data")), "nothing made");
    }

    @Test
    void versionWorksOnTheServeTreeAndTheFullTree() {
        assertEquals(0, run("serve", "--version"));
        assertEquals(0, run("--version"));
        String printed = out.toString(StandardCharsets.UTF_8);
        assertEquals(2, printed.lines().filter(l -> l.startsWith("csi4j ")).count(), printed);
    }
}
