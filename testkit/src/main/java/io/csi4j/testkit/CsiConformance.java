package io.csi4j.testkit;

import io.csi4j.testkit.suite.SanityTest;
import io.csi4j.testkit.suite.Session;
import io.csi4j.testkit.suite.StoppedAnswering;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import java.util.ArrayList;

/**
 * The suite as JUnit dynamic tests, for another project's build:
 * <pre>{@code
 * @TestFactory
 * Stream<DynamicNode> csiConformance() {
 *     return CsiConformance.tests(SanityConfig.builder("unix:///run/my-plugin/csi.sock").build());
 * }
 * }</pre>
 * One container per service, one test per conformance test. A failure fails the JUnit test with the
 * spec rule; NOT_APPLICABLE aborts it (JUnit reports it as skipped), and so does every test after the plugin
 * stopped answering (unless {@code keepGoing} brings it back). The plugin is connected to when
 * the first test runs; the connection is closed when JUnit closes the stream.
 */
public final class CsiConformance {
    private CsiConformance() {}

    public static Stream<DynamicNode> tests(SanityConfig config) {
        LazySession session = new LazySession(config);
        Map<String, List<SanityTest>> groups = new LinkedHashMap<>();
        for (SanityTest test : SanityRunner.plan(config)) {
            groups.computeIfAbsent(test.group(), g -> new ArrayList<>()).add(test);
        }
        return groups.entrySet().stream()
                .<DynamicNode>map(group -> DynamicContainer.dynamicContainer(group.getKey(),
                        group.getValue().stream().map(test -> DynamicTest.dynamicTest(
                                test.name().substring(group.getKey().length() + 1), () -> execute(session, test)))))
                .onClose(session::close);
    }

    private static void execute(LazySession lazy, SanityTest test) {
        Session session = lazy.get();
        if (lazy.stopped != null) Assumptions.abort(lazy.stopped.notRunReason());
        TestResult result = session.run(test);
        String stoppedLine = session.takeStoppedAnswering().map(s -> {
            // without a supervisor to bring it back, every later test would only fail UNAVAILABLE again
            if (!(session.config().keepGoing() && session.reconnect())) lazy.stopped = s;
            return "\n" + s.line();
        }).orElse("");
        switch (result.outcome()) {
            case PASSED -> { }
            case NOT_APPLICABLE -> Assumptions.abort("not applicable: " + result.message());
            case NOT_RUN -> Assumptions.abort(result.message());
            case FAILED -> Assertions.fail(result.message() + stoppedLine);
        }
    }

    /** Opens the session on first use; remembers a failed discovery so every test reports it. */
    private static final class LazySession {
        private final SanityConfig config;
        private Session session;
        private String failure;
        private volatile StoppedAnswering stopped;

        LazySession(SanityConfig config) {
            this.config = config;
        }

        synchronized Session get() {
            if (session == null && failure == null) {
                try {
                    session = Session.open(config);
                } catch (Session.DiscoveryFailure e) {
                    failure = e.getMessage();
                }
            }
            if (failure != null) Assertions.fail(SanityRunner.SETUP_TEST + ": " + failure);
            return session;
        }

        synchronized void close() {
            if (session != null) session.close();
            session = null;
        }
    }
}
