package io.csi4j.sdk;

import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;

/**
 * The one place that turns failures into the {@link Status} a CSI client sees. Expected failures
 * ({@link CsiException}, gRPC status exceptions) keep their code and message; anything else is a plugin bug
 * and becomes INTERNAL with a generic message, so no exception text (which may hold paths or secrets) and
 * no stack trace reaches the client.
 */
public final class StatusMapping {
    private StatusMapping() {}

    /** True for failures that carry their own client-facing code and message. */
    public static boolean isExpected(Throwable t) {
        return t instanceof CsiException || t instanceof StatusRuntimeException || t instanceof StatusException;
    }

    /** The status for {@code t}; {@code reference} (e.g. an id that also appears in the log) is added for bugs. */
    public static Status toStatus(Throwable t, String reference) {
        Status status = switch (t) {
            case CsiException e when e.code() != Status.Code.OK -> Status.fromCode(e.code()).withDescription(e.getMessage());
            case StatusRuntimeException e -> e.getStatus();
            case StatusException e -> e.getStatus();
            default -> null;
        };
        if (status != null && status.getCode() != Status.Code.OK) return status.withCause(null);
        return Status.INTERNAL.withDescription("internal error in the plugin"
                + (reference == null ? "" : " [ref " + reference + "]") + "; see the plugin log");
    }

    public static Status toStatus(Throwable t) {
        return toStatus(t, null);
    }

    public static StatusRuntimeException toException(Throwable t) {
        return toStatus(t).asRuntimeException();
    }

    /**
     * The failure hidden in a status handed to {@code ServerCall.close}: gRPC turns
     * {@code responseObserver.onError(anyException)} into UNKNOWN with that exception as the cause. Returns
     * null when the status is explicit (no cause, or a code chosen by the service).
     */
    public static Throwable hiddenFailure(Status status) {
        return status.getCode() == Status.Code.UNKNOWN ? status.getCause() : null;
    }
}
