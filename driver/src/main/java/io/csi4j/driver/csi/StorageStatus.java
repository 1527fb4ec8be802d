package io.csi4j.driver.csi;

import io.csi4j.driver.storage.StorageException;
import io.csi4j.sdk.CsiException;
import io.grpc.BindableService;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;

/**
 * The one place that chooses the gRPC code of a storage failure: storage says why ({@link StorageException.Reason}),
 * this says what a CO is told. Services are wrapped with {@link #wrap}, so a StorageException that leaves a
 * handler becomes a {@link CsiException} with its message before the SDK's interceptors see it.
 */
public final class StorageStatus implements ServerInterceptor {
    private static final StorageStatus INSTANCE = new StorageStatus();

    private StorageStatus() {}

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

    public static CsiException toCsi(StorageException e) {
        return new CsiException(code(e.reason()), e.getMessage(), e);
    }

    /** The service with storage failures mapped to CSI answers. */
    public static BindableService wrap(BindableService service) {
        return () -> ServerInterceptors.intercept(service, INSTANCE);
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                 ServerCallHandler<ReqT, RespT> next) {
        ServerCall.Listener<ReqT> delegate;
        try {
            delegate = next.startCall(call, headers);
        } catch (StorageException e) {
            throw toCsi(e);
        }
        return new SimpleForwardingServerCallListener<>(delegate) {
            @Override
            public void onMessage(ReqT message) {
                try {
                    super.onMessage(message);
                } catch (StorageException e) {
                    throw toCsi(e);
                }
            }

            @Override
            public void onHalfClose() {
                try {
                    super.onHalfClose();
                } catch (StorageException e) {
                    throw toCsi(e);
                }
            }

            @Override
            public void onReady() {
                try {
                    super.onReady();   // a server stream produces its messages here
                } catch (StorageException e) {
                    throw toCsi(e);
                }
            }
        };
    }
}
