package io.csi4j.testkit;

import io.csi4j.testkit.suite.SanityTest;
import io.csi4j.testkit.suite.Session;
import io.csi4j.testkit.suite.Suite;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs the conformance suite against one plugin: connects, learns its capabilities, runs every test
 * the focus selects (printing one line per test as it goes), cleans up after each, and closes with
 * exactly {@code N passed, N failed, N not applicable}.
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
        long start = System.nanoTime();
        try (Session session = Session.open(config)) {
            for (SanityTest test : plan) {
                TestResult result = session.run(test);
                out.println(result.line());
                out.flush();
                results.add(result);
            }
        } catch (Session.DiscoveryFailure e) {
            TestResult setup = new TestResult(SETUP_TEST, Outcome.FAILED, Duration.ofNanos(System.nanoTime() - start), e.getMessage());
            out.println(setup.line());
            results.add(setup);
        }
        SanityReport report = new SanityReport(started, results);
        out.println(report.summary());
        out.flush();
        return report;
    }
}
