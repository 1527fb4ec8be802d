package io.csi4j.testkit;

/** What became of one conformance test. NOT_APPLICABLE is never a pass: the plugin did not advertise what it needs. */
public enum Outcome {
    PASSED, FAILED, NOT_APPLICABLE
}
