package io.csi4j.testkit.suite;

/** Thrown inside a test when it finds at run time that the plugin does not offer what the test needs. */
public final class NotApplicable extends RuntimeException {
    public NotApplicable(String why) {
        super(why, null, false, false);
    }
}
