package io.csi4j.sdk.interceptor;

import com.google.protobuf.Message;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.List;
import java.util.logging.Logger;

/**
 * Answers INVALID_ARGUMENT, naming the field ({@code CreateVolume: name is REQUIRED}), for requests that break
 * the spec's field requirements, before the service sees them. Optionally checks responses too: a response that
 * breaks them is a plugin bug, logged and answered as INTERNAL instead of being sent.
 */
public final class ValidationInterceptor implements ServerInterceptor {
    private static final Logger LOG = Logger.getLogger(ValidationInterceptor.class.getName());
    private static final int MAX_REPORTED = 5;

    private final SpecValidator validator;
    private final boolean checkResponses;

    private ValidationInterceptor(SpecValidator validator, boolean checkResponses) {
        this.validator = validator;
        this.checkResponses = checkResponses;
    }

    /** Validates requests of csi.v1 and CSI-Addons services; responses are not checked. */
    public static ValidationInterceptor forCsi() {
        return new ValidationInterceptor(SpecValidator.forCsi(), false);
    }

    /** A copy that also checks responses (recommended in tests and staging). */
    public ValidationInterceptor withResponseValidation(boolean enabled) {
        return new ValidationInterceptor(validator, enabled);
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                 ServerCallHandler<ReqT, RespT> next) {
        var method = call.getMethodDescriptor();
        if (!validator.services().contains(method.getServiceName())) return next.startCall(call, headers);
        String rpc = method.getBareMethodName();
        ServerCall<ReqT, RespT> target = checkResponses ? new ResponseCheck<>(call, rpc) : call;
        return new SimpleForwardingServerCallListener<>(next.startCall(target, headers)) {
            private ReqT request;
            private boolean rejected;

            @Override
            public void onMessage(ReqT message) {
                request = message;
                if (!rejected) super.onMessage(message);
            }

            @Override
            public void onHalfClose() {
                // the service runs on half-close (after the request arrived): decide here, before it does
                if (request instanceof Message message) {
                    List<String> violations = validator.check(message);
                    if (!violations.isEmpty()) {
                        rejected = true;
                        call.close(Status.INVALID_ARGUMENT.withDescription(rpc + ": " + summary(violations)), new Metadata());
                        return;
                    }
                }
                super.onHalfClose();
            }
        };
    }

    private static String summary(List<String> violations) {
        String head = String.join("; ", violations.subList(0, Math.min(MAX_REPORTED, violations.size())));
        return violations.size() > MAX_REPORTED ? head + "; and " + (violations.size() - MAX_REPORTED) + " more" : head;
    }

    /** Holds back an invalid response and turns the call's end into INTERNAL. */
    private final class ResponseCheck<ReqT, RespT> extends SimpleForwardingServerCall<ReqT, RespT> {
        private final String rpc;
        private String violation;

        ResponseCheck(ServerCall<ReqT, RespT> call, String rpc) {
            super(call);
            this.rpc = rpc;
        }

        @Override
        public void sendMessage(RespT message) {
            if (violation != null) return;
            if (message instanceof Message m) {
                List<String> violations = validator.check(m);
                if (!violations.isEmpty()) {
                    violation = summary(violations);
                    LOG.warning(() -> "plugin bug: " + rpc + " response breaks the spec: " + violation);
                    return;
                }
            }
            super.sendMessage(message);
        }

        @Override
        public void close(Status status, Metadata trailers) {
            if (violation != null && status.isOk()) {
                super.close(Status.INTERNAL.withDescription(rpc + ": the plugin produced an invalid response: " + violation), new Metadata());
            } else {
                super.close(status, trailers);
            }
        }
    }
}
