package io.csi4j.cli.bench;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.Map;

/** The figures of one RPC in a run, in milliseconds. */
record CallStats(long count, long errors, double meanMs, double p50Ms, double p90Ms, double p99Ms, double maxMs) {

    static CallStats of(long[] sortedNanos, long errors) {
        double sum = 0;
        for (long n : sortedNanos) sum += n;
        return new CallStats(sortedNanos.length, errors,
                sortedNanos.length == 0 ? 0 : ms(sum / sortedNanos.length),
                ms(Latencies.percentile(sortedNanos, 50)), ms(Latencies.percentile(sortedNanos, 90)),
                ms(Latencies.percentile(sortedNanos, 99)), ms(sortedNanos.length == 0 ? 0 : sortedNanos[sortedNanos.length - 1]));
    }

    private static double ms(double nanos) {
        return Math.round(nanos / 1e3) / 1e3; // microsecond resolution
    }

    Map<String, Object> toJson() {
        var m = new LinkedHashMap<String, Object>();
        m.put("count", count);
        m.put("errors", errors);
        m.put("mean_ms", meanMs);
        m.put("p50_ms", p50Ms);
        m.put("p90_ms", p90Ms);
        m.put("p99_ms", p99Ms);
        m.put("max_ms", maxMs);
        return m;
    }

    static CallStats fromJson(Map<?, ?> m) {
        return new CallStats(num(m, "count").longValue(), num(m, "errors").longValue(), num(m, "mean_ms").doubleValue(),
                num(m, "p50_ms").doubleValue(), num(m, "p90_ms").doubleValue(), num(m, "p99_ms").doubleValue(),
                num(m, "max_ms").doubleValue());
    }

    static BigDecimal num(Map<?, ?> m, String key) {
        if (m.get(key) instanceof BigDecimal d) return d;
        throw new IllegalArgumentException("bench report: '" + key + "' is missing or not a number");
    }
}
