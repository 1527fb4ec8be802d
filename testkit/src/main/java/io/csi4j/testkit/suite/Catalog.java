package io.csi4j.testkit.suite;

import static io.csi4j.testkit.suite.Verdicts.fails;

import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;

/** Collects the tests of one part of the suite, in the order they run. */
final class Catalog {
    private final List<SanityTest> tests = new ArrayList<>();

    void add(String name, Requirement requirement, SanityTest.Body body) {
        tests.add(new SanityTest(name, requirement, body));
    }

    /** A request without one REQUIRED field must fail with INVALID_ARGUMENT (the general error scheme). */
    void missing(String path, String field, Requirement requirement, Request request) {
        String rpc = path.substring(path.lastIndexOf('/') + 1);
        add(path + "/missing " + field + " fails with INVALID_ARGUMENT", requirement, ctx -> {
            var call = request.prepare(ctx);
            fails(Status.Code.INVALID_ARGUMENT,
                    rpc + ": a request missing the REQUIRED field " + field + " MUST fail with INVALID_ARGUMENT", call);
        });
    }

    /** Prepares (with setup calls where needed) the call a missing-field test makes. */
    @FunctionalInterface
    interface Request {
        Verdicts.Call<?> prepare(TestContext ctx) throws Exception;
    }

    List<SanityTest> tests() {
        return List.copyOf(tests);
    }
}
