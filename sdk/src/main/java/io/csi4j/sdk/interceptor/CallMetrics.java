package io.csi4j.sdk.interceptor;

import io.grpc.Status;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * Per-method call counters, status codes and a latency histogram, rendered in the Prometheus text format
 * (names follow the usual gRPC server metrics: {@code grpc_server_started_total},
 * {@code grpc_server_handled_total}, {@code grpc_server_handling_seconds}).
 */
public final class CallMetrics {
    /** Upper bounds in seconds; CSI calls range from sub-millisecond probes to minutes-long copies. */
    static final double[] BUCKETS = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};

    private final Map<String, MethodStats> methods = new ConcurrentHashMap<>();
    /** Metrics a plugin keeps itself (in the text format), appended to the gRPC ones. */
    private final List<Supplier<String>> extra = new CopyOnWriteArrayList<>();

    /** Adds a plugin's own metrics, rendered in the Prometheus text format at every scrape. */
    public void include(Supplier<String> prometheusText) {
        extra.add(prometheusText);
    }

    private static final class MethodStats {
        final LongAdder started = new LongAdder();
        final AtomicLong inFlight = new AtomicLong();
        final Map<Status.Code, LongAdder> handled = new ConcurrentHashMap<>();
        final LongAdder[] buckets = new LongAdder[BUCKETS.length];
        final LongAdder count = new LongAdder();
        final DoubleAdder sum = new DoubleAdder();

        MethodStats() {
            for (int i = 0; i < buckets.length; i++) buckets[i] = new LongAdder();
        }
    }

    private MethodStats stats(String fullMethod) {
        return methods.computeIfAbsent(fullMethod, m -> new MethodStats());
    }

    public void started(String fullMethod) {
        MethodStats s = stats(fullMethod);
        s.started.increment();
        s.inFlight.incrementAndGet();
    }

    public void handled(String fullMethod, Status.Code code, long nanos) {
        MethodStats s = stats(fullMethod);
        s.inFlight.decrementAndGet();
        s.handled.computeIfAbsent(code, c -> new LongAdder()).increment();
        double seconds = nanos / 1e9;
        for (int i = 0; i < BUCKETS.length; i++) {
            if (seconds <= BUCKETS[i]) {
                s.buckets[i].increment();
                break;
            }
        }
        s.count.increment();
        s.sum.add(seconds);
    }

    /** Calls of {@code fullMethod} that ended with {@code code}. */
    public long handledCount(String fullMethod, Status.Code code) {
        MethodStats s = methods.get(fullMethod);
        if (s == null) return 0;
        LongAdder n = s.handled.get(code);
        return n == null ? 0 : n.sum();
    }

    /** The Prometheus text exposition (format 0.0.4) of everything recorded so far. */
    public String prometheusText() {
        StringBuilder out = new StringBuilder(4096);
        Map<String, MethodStats> sorted = new TreeMap<>(methods);
        out.append("# HELP grpc_server_started_total Calls started on the server, by method.\n");
        out.append("# TYPE grpc_server_started_total counter\n");
        sorted.forEach((m, s) -> out.append("grpc_server_started_total").append(labels(m, null, null)).append(' ')
                .append(s.started.sum()).append('\n'));
        out.append("# HELP grpc_server_handled_total Calls completed on the server, by method and status code.\n");
        out.append("# TYPE grpc_server_handled_total counter\n");
        sorted.forEach((m, s) -> new TreeMap<>(s.handled).forEach((code, n) ->
                out.append("grpc_server_handled_total").append(labels(m, code.name(), null)).append(' ').append(n.sum()).append('\n')));
        out.append("# HELP grpc_server_in_flight Calls running now, by method.\n");
        out.append("# TYPE grpc_server_in_flight gauge\n");
        sorted.forEach((m, s) -> out.append("grpc_server_in_flight").append(labels(m, null, null)).append(' ')
                .append(s.inFlight.get()).append('\n'));
        out.append("# HELP grpc_server_handling_seconds Time from the start of a call to its status, by method.\n");
        out.append("# TYPE grpc_server_handling_seconds histogram\n");
        sorted.forEach((m, s) -> {
            long cumulative = 0;
            for (int i = 0; i < BUCKETS.length; i++) {
                cumulative += s.buckets[i].sum();
                out.append("grpc_server_handling_seconds_bucket").append(labels(m, null, format(BUCKETS[i])))
                        .append(' ').append(cumulative).append('\n');
            }
            long count = s.count.sum();
            out.append("grpc_server_handling_seconds_bucket").append(labels(m, null, "+Inf")).append(' ').append(count).append('\n');
            out.append("grpc_server_handling_seconds_sum").append(labels(m, null, null)).append(' ')
                    .append(String.format(Locale.ROOT, "%.6f", s.sum.sum())).append('\n');
            out.append("grpc_server_handling_seconds_count").append(labels(m, null, null)).append(' ').append(count).append('\n');
        });
        for (var source : extra) out.append(source.get());
        return out.toString();
    }

    private static String labels(String fullMethod, String code, String le) {
        int slash = fullMethod.lastIndexOf('/');
        StringBuilder l = new StringBuilder("{grpc_service=\"").append(escape(fullMethod.substring(0, Math.max(0, slash))))
                .append("\",grpc_method=\"").append(escape(fullMethod.substring(slash + 1))).append('"');
        if (code != null) l.append(",grpc_code=\"").append(code).append('"');
        if (le != null) l.append(",le=\"").append(le).append('"');
        return l.append('}').toString();
    }

    private static String format(double bound) {
        return bound == Math.rint(bound) ? String.valueOf((long) bound) : String.valueOf(bound);
    }

    private static String escape(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
