package io.csi4j.testkit.suite;

import io.csi4j.testkit.connect.SentRequest;

/**
 * The plugin stopped answering during a test: a call ended UNAVAILABLE (or its stream was reset, CANCELLED) and
 * a Probe right after it could not reach the plugin either (connection refused, socket gone, process dead).
 *
 * @param test    the test that was running
 * @param request the request that was in flight (the first call of the test that ended UNAVAILABLE or CANCELLED)
 * @param status  how that call ended
 * @param probe   how the Probe after it ended
 */
public record StoppedAnswering(String test, SentRequest request, String status, String probe) {

    /** The one line that says so: test, request in flight, what the call and the Probe got. */
    public String line() {
        return "GONE the plugin stopped answering in " + test + ", during " + request.describe()
                + ": " + status + "; Probe then got " + probe;
    }

    /** The reason given for every test after it that is not run. */
    public String notRunReason() {
        return "not run: the plugin stopped answering in " + test + " (during " + request.rpc() + ")";
    }
}
