package io.csi4j.testkit.connect;

import com.google.protobuf.Message;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Remembers what the suite sends, so that a verdict can name the request that shows it: the last request
 * each thread sent (a blocking stub sends on the caller's thread), and the first call since {@link #reset()}
 * that ended UNAVAILABLE or CANCELLED (the one in flight when a plugin went away: a dead process's socket gives
 * UNAVAILABLE, a server shut down under a call resets its stream, CANCELLED). Whether the plugin is really gone
 * is for a Probe to tell.
 */
public final class CallLog {
    private static final ThreadLocal<SentRequest> LAST = new ThreadLocal<>();

    /** A call that ended UNAVAILABLE or CANCELLED, and how. */
    public record Unanswered(SentRequest request, Status status) {}

    private final AtomicReference<Unanswered> unavailable = new AtomicReference<>();

    /** The last request the current thread sent, if any since {@link #forgetThisThread()}. */
    public static Optional<SentRequest> lastOnThisThread() {
        return Optional.ofNullable(LAST.get());
    }

    public static void forgetThisThread() {
        LAST.remove();
    }

    /** Forgets the UNAVAILABLE call, if any (at the start of each test). */
    public void reset() {
        unavailable.set(null);
    }

    /** The first call since {@link #reset()} that ended UNAVAILABLE or CANCELLED. */
    public Optional<Unanswered> firstUnavailable() {
        return Optional.ofNullable(unavailable.get());
    }

    /** The interceptor for one connection; {@code endpoint} is named in the requests it records. */
    public ClientInterceptor interceptor(String endpoint) {
        return new ClientInterceptor() {
            @Override
            public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
                return new Recording<>(next.newCall(method, options), endpoint, method.getFullMethodName());
            }
        };
    }

    private final class Recording<Q, A> extends ForwardingClientCall.SimpleForwardingClientCall<Q, A> {
        private final String endpoint;
        private final String method;
        private volatile SentRequest sent;

        Recording(ClientCall<Q, A> call, String endpoint, String method) {
            super(call);
            this.endpoint = endpoint;
            this.method = method;
        }

        @Override
        public void start(Listener<A> listener, Metadata headers) {
            super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                @Override
                public void onClose(Status status, Metadata trailers) {
                    SentRequest request = sent;
                    boolean lost = status.getCode() == Status.Code.UNAVAILABLE || status.getCode() == Status.Code.CANCELLED;
                    if (lost && request != null) {
                        unavailable.compareAndSet(null, new Unanswered(request, status));
                    }
                    super.onClose(status, trailers);
                }
            }, headers);
        }

        @Override
        public void sendMessage(Q message) {
            if (message instanceof Message m) {
                SentRequest request = new SentRequest(endpoint, method, m);
                sent = request;
                LAST.set(request);
            }
            super.sendMessage(message);
        }
    }
}
