package io.csi4j.cli.bench;

import io.csi4j.cli.output.View;
import io.csi4j.driver.json.Json;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a bench run measured: the figures printed after a run and written by {@code --out}. {@code samplesUs}
 * holds every successful call's latency in microseconds, sorted, for anyone who wants other statistics.
 */
record BenchReport(String scenario, String endpoint, String plugin, String started, int concurrency, long requests,
                   long prefill, double prefillSeconds, long iterations, long failedIterations, double elapsedSeconds,
                   Map<String, CallStats> calls, Map<String, Long> errorCodes, Map<String, long[]> samplesUs) {

    static final int FORMAT = 1;

    double iterationsPerSecond() {
        return elapsedSeconds <= 0 ? 0 : iterations / elapsedSeconds;
    }

    double callsPerSecond() {
        long calls = this.calls.values().stream().mapToLong(c -> c.count() + c.errors()).sum();
        return elapsedSeconds <= 0 ? 0 : calls / elapsedSeconds;
    }

    long errors() {
        return calls.values().stream().mapToLong(CallStats::errors).sum();
    }

    void print(PrintWriter out) {
        out.println("%s against %s (%s): %d iterations, concurrency %d%s".formatted(scenario, endpoint, plugin, iterations,
                concurrency, prefill > 0 ? ", %d volumes prefilled in %s s".formatted(prefill, fixed(prefillSeconds, 2)) : ""));
        out.println("elapsed %s s: %s iterations/s, %s calls/s, %d failed iterations, %d failed calls%s".formatted(
                fixed(elapsedSeconds, 2), fixed(iterationsPerSecond(), 1), fixed(callsPerSecond(), 1), failedIterations, errors(),
                errorCodes.isEmpty() ? "" : " " + errorCodes));
        out.println();
        var grid = View.grid("CALL", "COUNT", "ERRORS", "MEAN", "P50", "P90", "P99", "MAX");
        calls.forEach((rpc, c) -> {
            if (c.count() == 0) grid.row(rpc, 0, c.errors(), "-", "-", "-", "-", "-");
            else grid.row(rpc, c.count(), c.errors(), ms(c.meanMs()), ms(c.p50Ms()), ms(c.p90Ms()), ms(c.p99Ms()), ms(c.maxMs()));
        });
        grid.build("no calls").render(out);
    }

    static String ms(double ms) {
        return fixed(ms, ms < 10 ? 3 : ms < 100 ? 2 : 1) + "ms";
    }

    static String fixed(double value, int decimals) {
        return String.format(Locale.ROOT, "%." + decimals + "f", value);
    }

    String toJson() {
        var m = new LinkedHashMap<String, Object>();
        m.put("csi4j_bench", FORMAT);
        m.put("scenario", scenario);
        m.put("endpoint", endpoint);
        m.put("plugin", plugin);
        m.put("started", started);
        m.put("concurrency", concurrency);
        m.put("requests", requests);
        m.put("prefill", prefill);
        m.put("prefill_seconds", prefillSeconds);
        m.put("iterations", iterations);
        m.put("failed_iterations", failedIterations);
        m.put("elapsed_seconds", elapsedSeconds);
        m.put("iterations_per_second", round(iterationsPerSecond()));
        m.put("calls_per_second", round(callsPerSecond()));
        var callMap = new LinkedHashMap<String, Object>();
        calls.forEach((rpc, c) -> callMap.put(rpc, c.toJson()));
        m.put("calls", callMap);
        m.put("error_codes", new LinkedHashMap<>(errorCodes));
        var samples = new LinkedHashMap<String, Object>();
        samplesUs.forEach((rpc, s) -> {
            var list = new ArrayList<Object>(s.length);
            for (long v : s) list.add(v);
            samples.put(rpc, list);
        });
        m.put("samples_us", samples);
        return Json.writePretty(m) + "\n";
    }

    static BenchReport fromJson(String text) {
        if (!(Json.parse(text) instanceof Map<?, ?> m) || !m.containsKey("csi4j_bench")) {
            throw new IllegalArgumentException("not a csi4j bench report (no csi4j_bench key)");
        }
        var calls = new LinkedHashMap<String, CallStats>();
        if (m.get("calls") instanceof Map<?, ?> c) c.forEach((k, v) -> calls.put((String) k, CallStats.fromJson((Map<?, ?>) v)));
        var codes = new LinkedHashMap<String, Long>();
        if (m.get("error_codes") instanceof Map<?, ?> c) c.forEach((k, v) -> codes.put((String) k, ((BigDecimal) v).longValue()));
        var samples = new LinkedHashMap<String, long[]>();
        if (m.get("samples_us") instanceof Map<?, ?> s) {
            s.forEach((k, v) -> samples.put((String) k, ((List<?>) v).stream().mapToLong(x -> ((BigDecimal) x).longValue()).toArray()));
        }
        return new BenchReport(str(m, "scenario"), str(m, "endpoint"), str(m, "plugin"), str(m, "started"),
                CallStats.num(m, "concurrency").intValue(), CallStats.num(m, "requests").longValue(),
                CallStats.num(m, "prefill").longValue(), CallStats.num(m, "prefill_seconds").doubleValue(),
                CallStats.num(m, "iterations").longValue(), CallStats.num(m, "failed_iterations").longValue(),
                CallStats.num(m, "elapsed_seconds").doubleValue(), calls, codes, samples);
    }

    private static String str(Map<?, ?> m, String key) {
        return m.get(key) instanceof String s ? s : "";
    }

    private static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }
}
