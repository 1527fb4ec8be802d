package io.csi4j.sdk.interceptor;

import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.concurrent.atomic.AtomicBoolean;

/** Records every call's method, status code and latency into a {@link CallMetrics}. Place it outermost. */
public final class MetricsInterceptor implements ServerInterceptor {
    private final CallMetrics metrics;

    public MetricsInterceptor(CallMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                 ServerCallHandler<ReqT, RespT> next) {
        String method = call.getMethodDescriptor().getFullMethodName();
        long start = System.nanoTime();
        AtomicBoolean ended = new AtomicBoolean();
        metrics.started(method);
        Runnable cancelled = () -> {
            if (ended.compareAndSet(false, true)) metrics.handled(method, Status.Code.CANCELLED, System.nanoTime() - start);
        };
        ServerCall<ReqT, RespT> measured = new SimpleForwardingServerCall<>(call) {
            @Override
            public void close(Status status, Metadata trailers) {
                if (ended.compareAndSet(false, true)) metrics.handled(method, status.getCode(), System.nanoTime() - start);
                super.close(status, trailers);
            }
        };
        return new SimpleForwardingServerCallListener<>(next.startCall(measured, headers)) {
            @Override
            public void onCancel() {
                cancelled.run();
                super.onCancel();
            }
        };
    }
}
