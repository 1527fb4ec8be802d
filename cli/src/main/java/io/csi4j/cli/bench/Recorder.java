package io.csi4j.cli.bench;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/** One worker's measurements: latencies of successful calls per RPC, errors per RPC and per code. */
final class Recorder {
    final Map<String, Latencies> latencies = new LinkedHashMap<>();
    final Map<String, Long> errors = new LinkedHashMap<>();
    final Map<Status.Code, Long> codes = new EnumMap<>(Status.Code.class);

    /** Times one call; a failed call is counted (not timed) and rethrown, which ends the iteration. */
    <T> T call(String rpc, Supplier<T> call) {
        long start = System.nanoTime();
        try {
            T result = call.get();
            latencies.computeIfAbsent(rpc, k -> new Latencies()).add(System.nanoTime() - start);
            return result;
        } catch (StatusRuntimeException e) {
            errors.merge(rpc, 1L, Long::sum);
            codes.merge(e.getStatus().getCode(), 1L, Long::sum);
            throw e;
        }
    }

    void addAll(Recorder other) {
        other.latencies.forEach((rpc, l) -> latencies.computeIfAbsent(rpc, k -> new Latencies()).addAll(l));
        other.errors.forEach((rpc, n) -> errors.merge(rpc, n, Long::sum));
        other.codes.forEach((code, n) -> codes.merge(code, n, Long::sum));
    }
}
