package io.csi4j.testkit.suite;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Arrays;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The suite's only assertions: every one names the spec rule it checks, so a failure reads
 * "spec: &lt;rule&gt;; got &lt;what the plugin did&gt;".
 */
public final class Verdicts {
    private Verdicts() {}

    @FunctionalInterface
    public interface Call<T> {
        T call() throws Exception;
    }

    /** The call must succeed; its answer is returned. */
    public static <T> T ok(String rule, Call<T> call) {
        try {
            return call.call();
        } catch (StatusRuntimeException e) {
            throw SpecViolation.inAnswer(rule, describe(e));
        } catch (SpecViolation | NotApplicable e) {
            throw e;
        } catch (Exception e) {
            throw SpecViolation.inAnswer(rule, describe(e));
        }
    }

    /** The call must fail with exactly this code. */
    public static Status.Code fails(Status.Code expected, String rule, Call<?> call) {
        return failsWithOneOf(rule, call, expected);
    }

    /** The call must fail with one of these codes (where two rows of the spec apply); returns the code it got. */
    public static Status.Code failsWithOneOf(String rule, Call<?> call, Status.Code... expected) {
        Set<Status.Code> allowed = Set.of(expected);
        Object answer;
        try {
            answer = call.call();
        } catch (StatusRuntimeException e) {
            Status.Code got = e.getStatus().getCode();
            if (allowed.contains(got)) return wellFormed(got, e);
            throw SpecViolation.inAnswer(rule, describe(e));
        } catch (SpecViolation | NotApplicable e) {
            throw e;
        } catch (Exception e) {
            throw SpecViolation.inAnswer(rule, describe(e));
        }
        throw SpecViolation.inAnswer(rule, "OK" + (answer == null ? "" : " (" + oneLine(answer) + ")"));
    }

    /** The call must either succeed or fail with one of these codes; returns the code, OK on success. */
    public static Status.Code okOr(String rule, Call<?> call, Status.Code... alsoAllowed) {
        try {
            call.call();
            return Status.Code.OK;
        } catch (StatusRuntimeException e) {
            Status.Code got = e.getStatus().getCode();
            if (Arrays.asList(alsoAllowed).contains(got)) return wellFormed(got, e);
            throw SpecViolation.inAnswer(rule, describe(e));
        } catch (SpecViolation | NotApplicable e) {
            throw e;
        } catch (Exception e) {
            throw SpecViolation.inAnswer(rule, describe(e));
        }
    }

    /** Where a status carries its details (google.rpc.Status), which the spec requires to be empty. */
    static final Metadata.Key<byte[]> STATUS_DETAILS = Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER);

    /**
     * The error scheme every expected error must follow, whatever its code: a human-readable message,
     * and no details.
     */
    static Status.Code wellFormed(Status.Code got, StatusRuntimeException e) {
        String message = e.getStatus().getDescription();
        if (message == null || message.isBlank()) {
            throw SpecViolation.inAnswer("Error scheme: the status message MUST contain a human readable description of the error if the code is not OK",
                    got + " with an empty message");
        }
        Metadata trailers = e.getTrailers();
        if (trailers != null && trailers.containsKey(STATUS_DETAILS)) {
            throw SpecViolation.inAnswer("Error scheme: the status details MUST be empty", got + " (" + message + ") with grpc-status-details-bin in its trailers");
        }
        return got;
    }

    public static void check(boolean condition, String rule, Supplier<String> got) {
        if (!condition) throw new SpecViolation(rule, got.get());
    }

    public static String codes(Status.Code... codes) {
        return Arrays.stream(codes).map(Enum::name).collect(Collectors.joining(" or "));
    }

    /** A short, one-line account of what went wrong in a call. */
    public static String describe(Throwable t) {
        if (t instanceof StatusRuntimeException e) {
            Status s = e.getStatus();
            String desc = s.getDescription();
            if (s.getCode() == Status.Code.DEADLINE_EXCEEDED && desc != null && desc.contains("deadline exceeded after")) {
                // the suite's own deadline, not the plugin's answer: a hang reads differently from an error
                int cut = desc.indexOf(". Name resolution");
                return s.getCode() + " (" + clip(cut < 0 ? desc : desc.substring(0, cut)) + "): no answer within the call timeout";
            }
            return s.getCode() + (desc == null || desc.isEmpty() ? "" : " (" + clip(desc) + ")");
        }
        if (t instanceof SpecViolation) return t.getMessage();
        String message = t.getMessage();
        return t.getClass().getSimpleName() + (message == null ? "" : ": " + clip(message));
    }

    /** Protobuf text of an answer squeezed into one short line. */
    public static String oneLine(Object answer) {
        return clip(answer.toString().replaceAll("\\s+", " ").strip());
    }

    private static String clip(String s) {
        return s.length() <= 240 ? s : s.substring(0, 237) + "...";
    }
}
