package io.csi4j.testkit;

import io.csi4j.testkit.suite.SanityTest;
import io.csi4j.testkit.suite.Session;
import io.csi4j.testkit.suite.StoppedAnswering;
import io.csi4j.testkit.suite.Suite;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Runs the conformance suite against one plugin: connects, learns its capabilities, runs every test
 * the focus selects (printing one line per test as it goes), cleans up after each, and closes with
 * exactly {@code N passed, N failed, N not run, N not applicable}. When the plugin stops answering it says so
 * once (test and request in flight) and leaves the rest not run, or with {@code keepGoing} reconnects.
 */
public final class SanityRunner {
    /** The name under which a failure to reach or question the plugin is reported. */
    public static final String SETUP_TEST = "Setup/connect, probe and discover capabilities";

    private final SanityConfig config;
    private final PrintStream out;

    public SanityRunner(SanityConfig config, PrintStream out) {
        this.config = config;
        this.out = out;
    }

    /** The tests this configuration selects, in run order. */
    public static List<SanityTest> plan(SanityConfig config) {
        return Suite.all().stream().filter(t -> config.selects(t.name())).toList();
    }

    /** Every test name of the suite, in run order. */
    public static List<String> testNames() {
        return Suite.all().stream().map(SanityTest::name).toList();
    }

    public SanityReport run() {
        Instant started = Instant.now();
        List<SanityTest> plan = plan(config);
        out.println("csi4j sanity: " + plan.size() + " tests against " + config.endpoint()
                + config.addonsEndpoint().map(a -> " (addons " + a + ")").orElse("")
                + ", " + config.accessType() + " volumes of " + config.volumeSize() + " bytes");
        List<TestResult> results = new ArrayList<>();
        Optional<String> stoppedLine = Optional.empty();
        long start = System.nanoTime();
        try (Session session = Session.open(config)) {
            StoppedAnswering gone = null;
            for (SanityTest test : plan) {
                if (gone != null) {
                    results.add(TestResult.notRun(test.name(), gone.notRunReason()));
                    continue;
                }
                TestResult result = session.run(test);
                out.println(result.line());
                results.add(result);
                Optional<StoppedAnswering> stopped = session.takeStoppedAnswering();
                if (stopped.isPresent()) {
                    // said once, here; the tests after it are NOT RUN rather than 60 echoes of one crash
                    out.println(stopped.get().line());
                    out.println("     replay: " + stopped.get().request().commandLine());
                    if (config.keepGoing()) {
                        long t0 = System.nanoTime();
                        if (session.reconnect()) {
                            out.println("     --keep-going: reconnected after " + (System.nanoTime() - t0) / 1_000_000 + " ms; going on");
                            continue;
                        }
                        out.println("     --keep-going: the plugin did not come back within " + config.callTimeout().toSeconds() + " s");
                    }
                    gone = stopped.get();
                }
                out.flush();
            }
            if (gone != null) {
                stoppedLine = Optional.of(gone.line());
                long left = results.stream().filter(r -> r.outcome() == Outcome.NOT_RUN).count();
                out.println("     " + left + " tests after it not run (exit code " + SanityMain.PLUGIN_STOPPED
                        + ")" + (config.keepGoing() ? "" : "; --keep-going reconnects and goes on (for a plugin under a supervisor)"));
            }
        } catch (Session.DiscoveryFailure e) {
            TestResult setup = new TestResult(SETUP_TEST, Outcome.FAILED, Duration.ofNanos(System.nanoTime() - start), e.getMessage());
            out.println(setup.line());
            results.add(setup);
        }
        SanityReport report = new SanityReport(started, results, stoppedLine);
        out.println(report.summary());
        out.flush();
        return report;
    }
}
