package io.csi4j.testkit.suite;

import io.csi4j.testkit.connect.CallLog;
import io.csi4j.testkit.connect.SentRequest;
import java.util.Optional;

/**
 * The plugin broke a rule of the spec. The message says which rule and what the plugin did instead;
 * {@link #request()} is the request that shows it: the call whose answer broke the rule, or for a check
 * made on answers, the last request this thread sent before the check.
 */
public final class SpecViolation extends RuntimeException {
    private final transient SentRequest request;
    private final boolean answer;

    public SpecViolation(String rule, String got) {
        this(rule, got, false);
    }

    SpecViolation(String rule, String got, boolean answer) {
        super("spec: " + rule + "; got " + got, null, false, false);
        this.request = CallLog.lastOnThisThread().orElse(null);
        this.answer = answer;
    }

    /** A violation found in the answer (or error) of the call just made. */
    static SpecViolation inAnswer(String rule, String got) {
        return new SpecViolation(rule, got, true);
    }

    public Optional<SentRequest> request() {
        return Optional.ofNullable(request);
    }

    /** True when {@link #request()} is the call whose answer broke the rule, not just the last one before a check. */
    public boolean requestAnswered() {
        return answer;
    }
}
