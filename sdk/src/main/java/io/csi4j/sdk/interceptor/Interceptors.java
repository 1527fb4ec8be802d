package io.csi4j.sdk.interceptor;

import io.grpc.ServerInterceptor;
import java.util.ArrayList;
import java.util.List;

/**
 * The standard interceptor chain, outermost first: metrics, call log, validation, in-flight guard, error safety.
 * Metrics and the log see every call, including refused ones; the guard sees only valid requests; error safety
 * sits next to the service so everything outside it sees the final, safe status. Each part can be replaced or
 * left out, and each interceptor also works alone.
 */
public final class Interceptors {
    private CallMetrics metrics = new CallMetrics();
    private boolean withMetrics = true;
    private boolean withLog = true;
    private ValidationInterceptor validation = ValidationInterceptor.forCsi();
    private InFlightGuard guard = InFlightGuard.forCsi();
    private boolean withErrorSafety = true;

    private Interceptors() {}

    /** All five, with CSI defaults. */
    public static Interceptors standard() {
        return new Interceptors();
    }

    public Interceptors metrics(CallMetrics metrics) {
        this.metrics = metrics;
        this.withMetrics = metrics != null;
        return this;
    }

    public Interceptors log(boolean enabled) {
        this.withLog = enabled;
        return this;
    }

    /** The validation to use, or null for none. */
    public Interceptors validation(ValidationInterceptor validation) {
        this.validation = validation;
        return this;
    }

    /** The guard to use, or null for none. */
    public Interceptors guard(InFlightGuard guard) {
        this.guard = guard;
        return this;
    }

    public Interceptors errorSafety(boolean enabled) {
        this.withErrorSafety = enabled;
        return this;
    }

    /** The chain, outermost first (as {@code ServerInterceptors.interceptForward} takes it). */
    public List<ServerInterceptor> build() {
        List<ServerInterceptor> chain = new ArrayList<>();
        if (withMetrics) chain.add(new MetricsInterceptor(metrics));
        if (withLog) chain.add(new CallLogInterceptor());
        if (validation != null) chain.add(validation);
        if (guard != null) chain.add(guard);
        if (withErrorSafety) chain.add(new ErrorSafetyInterceptor());
        return List.copyOf(chain);
    }
}
