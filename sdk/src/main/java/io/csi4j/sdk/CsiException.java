package io.csi4j.sdk;

import io.grpc.Status;

/**
 * A failure with the gRPC code the CSI spec prescribes for it. The edges throw these (services, routers, and the
 * mappers that turn a plugin's own failure types into them); {@link StatusMapping} turns them into a {@link Status}.
 * Messages must never contain secrets.
 */
public class CsiException extends RuntimeException {
    private final Status.Code code;

    public CsiException(Status.Code code, String message) {
        this(code, message, null);
    }

    public CsiException(Status.Code code, String message, Throwable cause) {
        super(message, cause, false, cause != null);
        this.code = code;
    }

    public Status.Code code() {
        return code;
    }

    public Status toStatus() {
        return Status.fromCode(code).withDescription(getMessage());
    }

    public static CsiException invalidArgument(String message) { return new CsiException(Status.Code.INVALID_ARGUMENT, message); }
    public static CsiException notFound(String message) { return new CsiException(Status.Code.NOT_FOUND, message); }
    public static CsiException alreadyExists(String message) { return new CsiException(Status.Code.ALREADY_EXISTS, message); }
    public static CsiException failedPrecondition(String message) { return new CsiException(Status.Code.FAILED_PRECONDITION, message); }
    public static CsiException outOfRange(String message) { return new CsiException(Status.Code.OUT_OF_RANGE, message); }
    public static CsiException resourceExhausted(String message) { return new CsiException(Status.Code.RESOURCE_EXHAUSTED, message); }
    public static CsiException aborted(String message) { return new CsiException(Status.Code.ABORTED, message); }
    public static CsiException unavailable(String message) { return new CsiException(Status.Code.UNAVAILABLE, message); }
    public static CsiException unimplemented(String message) { return new CsiException(Status.Code.UNIMPLEMENTED, message); }
    public static CsiException internal(String message, Throwable cause) { return new CsiException(Status.Code.INTERNAL, message, cause); }
}
