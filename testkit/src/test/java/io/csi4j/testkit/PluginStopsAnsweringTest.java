package io.csi4j.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.testkit.reference.Flaw;
import io.csi4j.testkit.reference.Options;
import io.csi4j.testkit.reference.ReferencePlugin;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * A plugin that goes away in the middle of the run (the reference plugin's servers shut down when ListSnapshots
 * gets a negative max_entries, like a Go driver's panic) is reported once, naming the test and the request in
 * flight; the rest is NOT RUN, not failed, and the exit code says so. A plugin that hangs fails one test with
 * DEADLINE_EXCEEDED naming the request, and the run goes on.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class PluginStopsAnsweringTest {
    static final String CRASH_TEST = "Controller/ListSnapshots/a negative max_entries fails with INVALID_ARGUMENT";
    static final String SECRET = "s3cr3t-reference-value";

    static SanityConfig.Builder config(ReferencePlugin plugin, Path dir) {
        return ReferencePluginConformanceTest.config(plugin, AccessType.MOUNT)
                .stagingDir(dir.resolve("staging"))
                .targetDir(dir.resolve("target"))
                .callTimeout(Duration.ofSeconds(3));
    }

    static List<String> lines(SanityMainTest.Run run, String prefix) {
        return run.lines().stream().filter(l -> l.startsWith(prefix)).toList();
    }

    @Test
    void aPluginThatExitsIsReportedOnceAndTheRestIsNotRun(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.start(Files.createDirectories(dir.resolve("plugin")), Options.full(),
                Set.of(Flaw.EXITS_ON_NEGATIVE_MAX_ENTRIES))) {
            Path junit = dir.resolve("sanity.xml");
            SanityMainTest.Run run = SanityMainTest.main(config(plugin, dir).build(), junit);
            String log = String.join("\n", run.lines());

            assertEquals(SanityMain.PLUGIN_STOPPED, run.exit(), log);
            List<String> gone = lines(run, "GONE ");
            assertEquals(1, gone.size(), log);
            assertTrue(gone.getFirst().startsWith("GONE the plugin stopped answering in " + CRASH_TEST
                    + ", during csi.v1.Controller/ListSnapshots {\"maxEntries\":-1,"), gone.getFirst());
            assertTrue(gone.getFirst().contains("\"secrets\":{\"reference-secret\":\"***\"}"), gone.getFirst());
            assertTrue(gone.getFirst().contains("; Probe then got UNAVAILABLE"), gone.getFirst());
            assertTrue(log.contains("     replay: csi4j call csi.v1.Controller/ListSnapshots '{\"maxEntries\":-1,"), log);
            assertFalse(log.contains(SECRET), "no secret value in the output");

            // the crash is one failure (the test it happened in); nothing after it is run, nothing echoes it
            assertEquals(List.of("FAIL " + CRASH_TEST), lines(run, "FAIL ").stream().map(l -> l.replaceAll(" \\(\\d+ ms\\)$", "")).toList(), log);
            int at = SanityRunner.plan(config(plugin, dir).build()).stream().map(t -> t.name()).toList().indexOf(CRASH_TEST);
            long after = SanityRunner.testNames().size() - at - 1;
            assertTrue(after > 40, "the crash is in the middle of the run");
            String summary = run.lines().getLast();
            assertTrue(summary.matches("\\d+ passed, 1 failed, " + after + " not run, \\d+ not applicable"), summary);
            assertTrue(log.contains("     " + after + " tests after it not run (exit code 3); --keep-going reconnects and goes on"), log);

            Element suite = SanityMainTest.xml(junit).getDocumentElement();
            assertEquals("1", suite.getAttribute("failures"));
            NodeList cases = suite.getElementsByTagName("testcase");
            Element last = (Element) cases.item(cases.getLength() - 1);
            Element skipped = (Element) last.getElementsByTagName("skipped").item(0);
            assertEquals("not run: the plugin stopped answering in " + CRASH_TEST + " (during ListSnapshots)", skipped.getAttribute("message"));
        }
    }

    @Test
    void withKeepGoingASupervisedPluginIsReconnectedAndTheRunGoesOn(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.startSupervised(Files.createDirectories(dir.resolve("plugin")), Options.full(),
                Set.of(Flaw.EXITS_ON_NEGATIVE_MAX_ENTRIES), Duration.ofMillis(1500))) {
            SanityMainTest.Run run = SanityMainTest.main(config(plugin, dir).keepGoing(true).build(), null);
            String log = String.join("\n", run.lines());

            assertEquals(SanityMain.FAILED, run.exit(), log);
            assertEquals(1, lines(run, "GONE ").size(), log);
            assertEquals(1, run.lines().stream().filter(l -> l.matches("     --keep-going: reconnected after \\d+ ms; going on")).count(), log);
            assertEquals(1, lines(run, "FAIL ").size(), log);
            assertTrue(run.lines().getLast().matches("\\d+ passed, 1 failed, 0 not run, \\d+ not applicable"), run.lines().getLast());
            assertTrue(lines(run, "PASS Lifecycle/").size() > 5, "the tests after the crash ran:\n" + log);
        }
    }

    @Test
    void withKeepGoingAPluginThatStaysDownLeavesTheRestNotRun(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.start(Files.createDirectories(dir.resolve("plugin")), Options.full(),
                Set.of(Flaw.EXITS_ON_NEGATIVE_MAX_ENTRIES))) {
            SanityMainTest.Run run = SanityMainTest.main(config(plugin, dir).keepGoing(true).callTimeout(Duration.ofSeconds(1))
                    .focus("^(Controller/ListSnapshots|Lifecycle/volume)/").build(), null);
            String log = String.join("\n", run.lines());

            assertEquals(SanityMain.PLUGIN_STOPPED, run.exit(), log);
            assertTrue(log.contains("     --keep-going: the plugin did not come back within 1 s"), log);
            assertTrue(run.lines().getLast().matches("\\d+ passed, 1 failed, [1-9]\\d* not run, 0 not applicable"), run.lines().getLast());
        }
    }

    @Test
    void aHangingCallFailsItsTestNamingTheRequestAndTheRunGoesOn(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.start(Files.createDirectories(dir.resolve("plugin")), Options.full(), Set.of(Flaw.HANGS_ON_STATS))) {
            StringBuilder log = new StringBuilder();
            SanityReport report = ReferencePluginConformanceTest.run(config(plugin, dir).callTimeout(Duration.ofSeconds(1)).focus("^Node/").build(), log);

            TestResult stats = report.results().stream().filter(r -> r.name().equals("Node/NodeGetVolumeStats/reports the usage of a published volume"))
                    .findFirst().orElseThrow();
            assertEquals(Outcome.FAILED, stats.outcome(), log::toString);
            assertTrue(stats.message().contains("got DEADLINE_EXCEEDED"), stats.message());
            assertTrue(stats.message().contains("no answer within the call timeout"), stats.message());
            assertTrue(stats.message().contains("\nrequest: csi.v1.Node/NodeGetVolumeStats {\"volumeId\":\""), stats.message());
            assertTrue(stats.message().contains("\nreplay: csi4j call csi.v1.Node/NodeGetVolumeStats '{"), stats.message());
            // the run went on: a hang is not a plugin that went away
            assertFalse(log.toString().contains("GONE "), log::toString);
            assertEquals(0, report.notRun());
            int at = report.results().indexOf(stats);
            assertTrue(report.results().subList(at + 1, report.results().size()).stream().anyMatch(r -> r.outcome() == Outcome.PASSED), log::toString);
        }
    }

    @Test
    void aPluginProcessThatDiesIsReportedOnce(@TempDir Path dir) throws Exception {
        Path pluginDir = Files.createDirectories(dir.resolve("plugin"));
        Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), io.csi4j.testkit.reference.ReferencePluginMain.class.getName(),
                pluginDir.toString(), Flaw.EXITS_ON_NEGATIVE_MAX_ENTRIES.name()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
            String ready = new java.io.BufferedReader(new java.io.InputStreamReader(process.getInputStream(), java.nio.charset.StandardCharsets.UTF_8)).readLine();
            assertTrue(ready != null && ready.startsWith("READY "), "the plugin process did not start: " + ready);
            SanityConfig config = SanityConfig.builder(ready.substring("READY ".length())).volumeSize(1 << 20).idempotencyRepeats(2)
                    .stagingDir(dir.resolve("staging")).targetDir(dir.resolve("target")).callTimeout(Duration.ofSeconds(3)).build();
            SanityMainTest.Run run = SanityMainTest.main(config, null);
            String log = String.join("\n", run.lines());

            assertTrue(process.waitFor(10, TimeUnit.SECONDS) && process.exitValue() == 70, "the plugin process died");
            assertEquals(SanityMain.PLUGIN_STOPPED, run.exit(), log);
            List<String> gone = lines(run, "GONE ");
            assertEquals(1, gone.size(), log);
            assertTrue(gone.getFirst().startsWith("GONE the plugin stopped answering in " + CRASH_TEST
                    + ", during csi.v1.Controller/ListSnapshots {\"maxEntries\":-1}: UNAVAILABLE"), gone.getFirst());
            assertEquals(1, lines(run, "FAIL ").size(), log);
            assertTrue(run.lines().getLast().matches("\\d+ passed, 1 failed, [1-9]\\d+ not run, \\d+ not applicable"), run.lines().getLast());
        } finally {
            process.destroyForcibly();
        }
    }
}
