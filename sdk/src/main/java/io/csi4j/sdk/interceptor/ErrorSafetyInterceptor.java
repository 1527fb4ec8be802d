package io.csi4j.sdk.interceptor;

import com.google.protobuf.Message;
import io.csi4j.sdk.Secrets;
import io.csi4j.sdk.StatusMapping;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * What leaves the plugin when something fails is safe: a {@link io.csi4j.sdk.CsiException} becomes its code and
 * message; any other exception (thrown, or passed to {@code onError}) becomes INTERNAL with a generic message and
 * a reference that is also in the log, never the exception's text or a stack trace. Every status message is
 * scrubbed of the request's secret values, and trailers (so {@code status.details}) stay empty as the spec
 * requires. Place it innermost, next to the service, so the other interceptors see the final status.
 */
public final class ErrorSafetyInterceptor implements ServerInterceptor {
    private static final Logger LOG = Logger.getLogger(ErrorSafetyInterceptor.class.getName());
    private static final SecureRandom RANDOM = new SecureRandom();

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                 ServerCallHandler<ReqT, RespT> next) {
        SafeCall<ReqT, RespT> safe = new SafeCall<>(call);
        ServerCall.Listener<ReqT> delegate;
        try {
            delegate = next.startCall(safe, headers);
        } catch (RuntimeException | Error e) {
            safe.fail(e);
            return new ServerCall.Listener<>() {};
        }
        return new SimpleForwardingServerCallListener<>(delegate) {
            @Override
            public void onMessage(ReqT message) {
                if (message instanceof Message m) safe.request = m;
                try {
                    super.onMessage(message);
                } catch (RuntimeException | Error e) {
                    safe.fail(e);
                }
            }

            @Override
            public void onHalfClose() {
                try {
                    super.onHalfClose();
                } catch (RuntimeException | Error e) {
                    safe.fail(e);
                }
            }

            @Override
            public void onReady() {
                try {
                    super.onReady();
                } catch (RuntimeException | Error e) {
                    safe.fail(e);
                }
            }

            @Override
            public void onCancel() {
                try {
                    super.onCancel();
                } catch (RuntimeException | Error e) {
                    safe.logUnexpected(e);
                }
            }

            @Override
            public void onComplete() {
                try {
                    super.onComplete();
                } catch (RuntimeException | Error e) {
                    safe.logUnexpected(e);
                }
            }
        };
    }

    private static final class SafeCall<ReqT, RespT> extends SimpleForwardingServerCall<ReqT, RespT> {
        // the request, kept so its secret values are collected (a walk of every field) only when a message is scrubbed
        volatile Message request;
        private volatile boolean closed;

        SafeCall(ServerCall<ReqT, RespT> call) {
            super(call);
        }

        @Override
        public void close(Status status, Metadata trailers) {
            Throwable hidden = StatusMapping.hiddenFailure(status);
            Status mapped;
            if (hidden != null) {
                mapped = StatusMapping.isExpected(hidden) ? StatusMapping.toStatus(hidden) : unexpected(hidden);
            } else {
                mapped = status.withCause(null);
            }
            closed = true;
            String description = mapped.getDescription();
            if (description != null && !description.isEmpty()) mapped = mapped.withDescription(Secrets.scrub(description, secrets()));
            super.close(mapped, new Metadata());
        }

        Set<String> secrets() {
            Message m = request;
            return m == null ? Set.of() : Secrets.values(m);
        }

        /** A failure thrown out of the service. */
        void fail(Throwable t) {
            Status status = StatusMapping.isExpected(t) ? StatusMapping.toStatus(t) : unexpected(t);
            if (!closed) {
                try {
                    close(status, new Metadata());
                } catch (IllegalStateException alreadyClosed) {
                    // the service closed the call and then threw: the client has its answer
                }
            }
            if (t instanceof VirtualMachineError fatal) throw fatal;
        }

        private Status unexpected(Throwable t) {
            String reference = HexFormat.of().toHexDigits(RANDOM.nextInt());
            logUnexpected(t, reference);
            return StatusMapping.toStatus(t, reference);
        }

        void logUnexpected(Throwable t) {
            logUnexpected(t, HexFormat.of().toHexDigits(RANDOM.nextInt()));
        }

        private void logUnexpected(Throwable t, String reference) {
            String method = getMethodDescriptor().getFullMethodName();
            LOG.warning(() -> "plugin bug [ref " + reference + "] in " + method + ": " + describe(t, secrets(), false));
            if (LOG.isLoggable(Level.FINE)) LOG.fine(() -> "[ref " + reference + "] " + describe(t, secrets(), true));
        }
    }

    /** The exception, its causes and (optionally) frames on one line, with secret values scrubbed from messages. */
    static String describe(Throwable t, Set<String> secrets, boolean frames) {
        StringBuilder out = new StringBuilder();
        int depth = 0;
        for (Throwable c = t; c != null && depth < 8; c = c.getCause(), depth++) {
            if (depth > 0) out.append(" | caused by ");
            out.append(c.getClass().getName());
            if (c.getMessage() != null) out.append(": ").append(Secrets.scrub(c.getMessage(), secrets));
            StackTraceElement[] stack = c.getStackTrace();
            int shown = frames ? Math.min(stack.length, 12) : Math.min(stack.length, 1);
            for (int i = 0; i < shown; i++) out.append(" at ").append(stack[i]);
        }
        return out.toString();
    }
}
