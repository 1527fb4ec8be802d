package io.csi4j.sdk.interceptor;

import com.google.protobuf.Message;
import io.csi4j.sdk.Secrets;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One line per call on logger {@code io.csi4j.sdk.call}: method, status code and duration (INFO; WARNING for
 * INTERNAL, UNKNOWN and DATA_LOSS; FINE for a Probe answered OK, which liveness checks ask every second). At FINE, also the request and the response, with every {@code csi_secret}
 * field replaced by {@value Secrets#MASK}; status messages are scrubbed of the request's secret values too.
 */
public final class CallLogInterceptor implements ServerInterceptor {
    public static final String LOGGER = "io.csi4j.sdk.call";
    private static final Logger LOG = Logger.getLogger(LOGGER);

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                 ServerCallHandler<ReqT, RespT> next) {
        long start = System.nanoTime();
        String method = call.getMethodDescriptor().getFullMethodName();
        AtomicBoolean ended = new AtomicBoolean();
        var state = new Object() {
            // the request, kept so its secret values are collected only when a status message must be scrubbed
            volatile Message request;

            void end(Status status) {
                if (!ended.compareAndSet(false, true)) return;
                long tenths = (System.nanoTime() - start + 50_000) / 100_000;
                Level level = switch (status.getCode()) {
                    case INTERNAL, UNKNOWN, DATA_LOSS -> Level.WARNING;
                    // a cluster controller's heartbeat asks every agent each second: a line a second would drown the log
                    case OK -> method.endsWith("/Probe") ? Level.FINE : Level.INFO;
                    default -> Level.INFO;
                };
                if (!LOG.isLoggable(level)) return;
                // by hand, not String.format: this runs for every call
                String line = method + " " + status.getCode() + " " + tenths / 10 + "." + tenths % 10 + "ms";
                if (status.getDescription() != null) {
                    Message m = request;
                    Set<String> secrets = m == null ? Set.of() : Secrets.values(m);
                    line += " \"" + Secrets.scrub(status.getDescription(), secrets) + "\"";
                }
                LOG.log(level, line);
            }
        };
        ServerCall<ReqT, RespT> logged = new SimpleForwardingServerCall<>(call) {
            @Override
            public void sendMessage(RespT message) {
                if (LOG.isLoggable(Level.FINE) && message instanceof Message m) {
                    LOG.fine(() -> method + " response " + Secrets.toLogString(m));
                }
                super.sendMessage(message);
            }

            @Override
            public void close(Status status, Metadata trailers) {
                state.end(status);
                super.close(status, trailers);
            }
        };
        return new SimpleForwardingServerCallListener<>(next.startCall(logged, headers)) {
            @Override
            public void onMessage(ReqT message) {
                if (message instanceof Message m) {
                    state.request = m;
                    if (LOG.isLoggable(Level.FINE)) LOG.fine(() -> method + " request " + Secrets.toLogString(m));
                }
                super.onMessage(message);
            }

            @Override
            public void onCancel() {
                state.end(Status.CANCELLED.withDescription("cancelled by the client or its deadline"));
                super.onCancel();
            }
        };
    }
}
