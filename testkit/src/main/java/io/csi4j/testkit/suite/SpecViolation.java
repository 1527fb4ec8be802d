package io.csi4j.testkit.suite;

/** The plugin broke a rule of the spec. The message says which rule and what the plugin did instead. */
public final class SpecViolation extends RuntimeException {
    public SpecViolation(String rule, String got) {
        super("spec: " + rule + "; got " + got, null, false, false);
    }
}
