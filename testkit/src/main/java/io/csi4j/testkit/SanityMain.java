package io.csi4j.testkit;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;

/** The entry point a command line wraps: run the suite, optionally write JUnit XML, answer an exit code. */
public final class SanityMain {
    private SanityMain() {}

    /** Runs the suite; 0 when nothing failed, 1 otherwise. */
    public static int run(SanityConfig config, PrintStream out) {
        return run(config, null, out);
    }

    /** Runs the suite and writes the JUnit XML report to {@code junitXml} (when not null); 0 when nothing failed, 1 otherwise, 2 when the report cannot be written. */
    public static int run(SanityConfig config, Path junitXml, PrintStream out) {
        SanityReport report = new SanityRunner(config, out).run();
        if (junitXml != null) {
            try {
                report.writeJUnitXml(junitXml);
            } catch (IOException e) {
                out.println("cannot write the JUnit report: " + e.getMessage());
                return 2;
            }
        }
        return report.succeeded() ? 0 : 1;
    }
}
