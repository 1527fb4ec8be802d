package io.csi4j.testkit;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;

/**
 * The entry point a command line wraps, and the main class of the self-contained {@code csi4j-testkit.jar}:
 * run the suite, optionally write JUnit XML, answer an exit code.
 *
 * <p>Exit codes: {@value #PASSED} nothing failed; {@value #FAILED} a test failed; {@value #NOT_RUN_AT_ALL} the
 * command line was wrong or the JUnit report could not be written; {@value #PLUGIN_STOPPED} the plugin stopped
 * answering during the run (and, with {@code --keep-going}, did not come back): the tests after it were not run.
 */
public final class SanityMain {
    public static final int PASSED = 0;
    public static final int FAILED = 1;
    public static final int NOT_RUN_AT_ALL = 2;
    public static final int PLUGIN_STOPPED = 3;

    private SanityMain() {}

    public static void main(String[] args) {
        System.exit(main(args, System.out, System.err));
    }

    /** Parses the command line ({@link SanityArgs}) and runs; returns the exit code. */
    public static int main(String[] args, PrintStream out, PrintStream err) {
        SanityArgs parsed;
        try {
            parsed = SanityArgs.parse(args, System.getenv("CSI_ENDPOINT"));
        } catch (IllegalArgumentException | IOException e) {
            err.println("csi4j-testkit: " + e.getMessage());
            err.println("Try --help.");
            return NOT_RUN_AT_ALL;
        }
        return switch (parsed) {
            case SanityArgs.Help() -> {
                out.print(SanityArgs.USAGE);
                yield PASSED;
            }
            case SanityArgs.ListTests() -> {
                SanityRunner.testNames().forEach(out::println);
                yield PASSED;
            }
            case SanityArgs.Run(SanityConfig config, Path junit) -> run(config, junit, out);
        };
    }

    /** Runs the suite; 0 when nothing failed, 1 when something did, 3 when the plugin stopped answering. */
    public static int run(SanityConfig config, PrintStream out) {
        return run(config, null, out);
    }

    /**
     * Runs the suite and writes the JUnit XML report to {@code junitXml} (when not null); 0 when nothing failed,
     * 1 when something did, 2 when the report cannot be written, 3 when the plugin stopped answering.
     */
    public static int run(SanityConfig config, Path junitXml, PrintStream out) {
        SanityReport report = new SanityRunner(config, out).run();
        if (junitXml != null) {
            try {
                report.writeJUnitXml(junitXml);
            } catch (IOException e) {
                out.println("cannot write the JUnit report: " + e.getMessage());
                return NOT_RUN_AT_ALL;
            }
        }
        if (report.cutShort()) return PLUGIN_STOPPED;
        return report.succeeded() ? PASSED : FAILED;
    }
}
