package io.csi4j.testkit;

/**
 * What became of one conformance test. NOT_APPLICABLE is never a pass: the plugin did not advertise what it needs.
 * NOT_RUN is neither: the plugin had stopped answering before the test's turn.
 */
public enum Outcome {
    PASSED, FAILED, NOT_RUN, NOT_APPLICABLE
}
