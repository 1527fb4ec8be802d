package io.csi4j.sdk.interceptor;

import io.grpc.BindableService;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import java.util.function.UnaryOperator;

/**
 * Rethrows what a service's handler throws as what {@code translate} makes of it, before any other interceptor sees
 * it: how an edge turns the failures of the layers below, which speak their own terms, into {@link
 * io.csi4j.sdk.CsiException}s with the code that edge picks. {@code translate} returns anything it does not know
 * as it is. Every callback a handler runs in is covered: startCall, onMessage, onHalfClose, and onReady (where a
 * server stream produces its messages).
 */
public final class FailureTranslation implements ServerInterceptor {
    private final UnaryOperator<RuntimeException> translate;

    private FailureTranslation(UnaryOperator<RuntimeException> translate) {
        this.translate = translate;
    }

    /** The service with its failures translated; wrap it innermost, right around the service. */
    public static BindableService wrap(BindableService service, UnaryOperator<RuntimeException> translate) {
        var interceptor = new FailureTranslation(translate);
        return () -> ServerInterceptors.intercept(service, interceptor);
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                 ServerCallHandler<ReqT, RespT> next) {
        ServerCall.Listener<ReqT> delegate;
        try {
            delegate = next.startCall(call, headers);
        } catch (RuntimeException e) {
            throw translate.apply(e);
        }
        return new SimpleForwardingServerCallListener<>(delegate) {
            @Override
            public void onMessage(ReqT message) {
                try {
                    super.onMessage(message);
                } catch (RuntimeException e) {
                    throw translate.apply(e);
                }
            }

            @Override
            public void onHalfClose() {
                try {
                    super.onHalfClose();
                } catch (RuntimeException e) {
                    throw translate.apply(e);
                }
            }

            @Override
            public void onReady() {
                try {
                    super.onReady();
                } catch (RuntimeException e) {
                    throw translate.apply(e);
                }
            }
        };
    }
}
