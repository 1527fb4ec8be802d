package io.csi4j.testkit;

import java.time.Duration;
import java.util.Objects;

/**
 * One test's verdict. For FAILED the message names the spec rule and what the plugin did
 * ("spec: DeleteVolume MUST reply OK for a volume that does not exist; got NOT_FOUND");
 * for NOT_APPLICABLE it names the missing capability; for NOT_RUN, why the test never got its turn.
 */
public record TestResult(String name, Outcome outcome, Duration duration, String message) {
    public TestResult {
        Objects.requireNonNull(name);
        Objects.requireNonNull(outcome);
        Objects.requireNonNull(duration);
        message = message == null ? "" : message;
    }

    /** A test that was not run because the plugin had stopped answering. */
    public static TestResult notRun(String name, String why) {
        return new TestResult(name, Outcome.NOT_RUN, Duration.ZERO, why);
    }

    /** The line the runner prints while the suite runs. */
    public String line() {
        String label = switch (outcome) {
            case PASSED -> "PASS";
            case FAILED -> "FAIL";
            case NOT_APPLICABLE -> "N/A ";
            case NOT_RUN -> "SKIP";
        };
        String text = label + " " + name + " (" + duration.toMillis() + " ms)";
        return message.isEmpty() || outcome == Outcome.PASSED ? text : text + "\n     " + message.replace("\n", "\n     ");
    }
}
