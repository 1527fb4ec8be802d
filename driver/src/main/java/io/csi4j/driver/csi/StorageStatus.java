package io.csi4j.driver.csi;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.storage.StorageException;
import io.csi4j.sdk.CsiException;
import io.csi4j.sdk.interceptor.FailureTranslation;
import io.grpc.BindableService;
import io.grpc.Status;

/**
 * The one place that chooses the csi.v1 code of a failure from below: the domain says why ({@link
 * DomainException.Kind}), storage says why ({@link StorageException.Reason}), this says what a CO is told. Services
 * are wrapped with {@link #wrap}, so such a failure that leaves a handler becomes a {@link CsiException} with its
 * message before the SDK's interceptors see it.
 */
public final class StorageStatus {
    private StorageStatus() {}

    public static Status.Code code(DomainException.Kind kind) {
        return switch (kind) {
            case NOT_FOUND -> Status.Code.NOT_FOUND;
            case EXISTS -> Status.Code.ALREADY_EXISTS;
            case INVALID -> Status.Code.INVALID_ARGUMENT;
            case OUT_OF_RANGE -> Status.Code.OUT_OF_RANGE;
            case EXHAUSTED -> Status.Code.RESOURCE_EXHAUSTED;
            case PRECONDITION -> Status.Code.FAILED_PRECONDITION;
            case ABORTED -> Status.Code.ABORTED;
            case UNAVAILABLE -> Status.Code.UNAVAILABLE;
            case FAILED -> Status.Code.INTERNAL;
        };
    }

    public static Status.Code code(StorageException.Reason reason) {
        return switch (reason) {
            case NOT_FOUND -> Status.Code.NOT_FOUND;
            case EXISTS -> Status.Code.ALREADY_EXISTS;
            case INVALID, UNSUPPORTED -> Status.Code.INVALID_ARGUMENT;   // CSI has no code of its own for "cannot here"
            case OUT_OF_RANGE -> Status.Code.OUT_OF_RANGE;
            case NO_SPACE -> Status.Code.RESOURCE_EXHAUSTED;
            case IN_USE -> Status.Code.FAILED_PRECONDITION;
            case BUSY -> Status.Code.ABORTED;
            case TIMED_OUT -> Status.Code.DEADLINE_EXCEEDED;
            case FAILED -> Status.Code.INTERNAL;
        };
    }

    /** A domain or storage failure as the CSI answer (code and message); anything else as it is. */
    public static RuntimeException toCsi(RuntimeException e) {
        return switch (e) {
            case DomainException d -> new CsiException(code(d.kind()), d.getMessage(), d.getCause());
            case StorageException s -> new CsiException(code(s.reason()), s.getMessage(), s);
            default -> e;
        };
    }

    /** The service with domain and storage failures mapped to CSI answers. */
    public static BindableService wrap(BindableService service) {
        return FailureTranslation.wrap(service, StorageStatus::toCsi);
    }
}
