package io.csi4j.cli.bench;

import io.csi4j.cli.output.View;
import java.io.PrintWriter;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/** {@code bench --compare a.json b.json}: the figures of two runs side by side, with b/a. */
final class Comparison {
    private Comparison() {}

    static void print(String nameA, BenchReport a, String nameB, BenchReport b, PrintWriter out) {
        out.println("a: " + nameA + "  " + describe(a));
        out.println("b: " + nameB + "  " + describe(b));
        if (!a.scenario().equals(b.scenario())) out.println("note: different scenarios; the ratios compare unlike work");
        out.println();
        var grid = View.grid("FIGURE", "A", "B", "B/A");
        grid.row("iterations/s", BenchReport.fixed(a.iterationsPerSecond(), 1), BenchReport.fixed(b.iterationsPerSecond(), 1),
                ratio(a.iterationsPerSecond(), b.iterationsPerSecond()));
        grid.row("calls/s", BenchReport.fixed(a.callsPerSecond(), 1), BenchReport.fixed(b.callsPerSecond(), 1),
                ratio(a.callsPerSecond(), b.callsPerSecond()));
        grid.row("failed calls", a.errors(), b.errors(), "");
        var rpcs = new LinkedHashSet<>(a.calls().keySet());
        rpcs.addAll(b.calls().keySet());
        for (String rpc : rpcs) {
            row(grid, rpc, "p50", a, b, CallStats::p50Ms);
            row(grid, rpc, "p90", a, b, CallStats::p90Ms);
            row(grid, rpc, "p99", a, b, CallStats::p99Ms);
            row(grid, rpc, "max", a, b, CallStats::maxMs);
        }
        grid.build("nothing to compare").render(out);
        out.println();
        out.println("B/A above 1 means b is higher: better for throughput, worse for latency.");
        out.flush();
    }

    private static void row(View.GridBuilder grid, String rpc, String figure, BenchReport a, BenchReport b,
                            ToDoubleFunction<CallStats> get) {
        CallStats ca = a.calls().get(rpc);
        CallStats cb = b.calls().get(rpc);
        grid.row(rpc + " " + figure, ca == null ? "-" : BenchReport.ms(get.applyAsDouble(ca)),
                cb == null ? "-" : BenchReport.ms(get.applyAsDouble(cb)),
                ca == null || cb == null ? "-" : ratio(get.applyAsDouble(ca), get.applyAsDouble(cb)));
    }

    static String ratio(double a, double b) {
        if (a <= 0) return "-";
        return String.format(Locale.ROOT, "%.2fx", b / a);
    }

    private static String describe(BenchReport r) {
        return "%s, %d iterations, concurrency %d%s, %s".formatted(r.scenario(), r.iterations(), r.concurrency(),
                r.prefill() > 0 ? ", prefill " + r.prefill() : "", r.plugin());
    }
}
