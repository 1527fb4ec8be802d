package io.csi4j.driver.replication;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * What the last complete round of each secondary on this node did, for metrics (docs/replication.md, "Observability").
 * Kept in memory only: after an agent restart a volume has no figures until its next round (one interval at most),
 * which is what a scrape should show rather than a stale lag. Lag is now minus the cut time of the point the copy
 * holds; the cut time recorded is taken just before the primary was asked to cut, so the lag shown is never less than
 * the true one.
 */
public final class RoundLog {
    /** One complete round: when the point was cut (at the latest), when the copy held it, its bytes and duration. */
    public record Round(Instant cutAt, Instant completedAt, long bytes, Duration took) {
        public Round {
            Objects.requireNonNull(cutAt, "cutAt");
            Objects.requireNonNull(completedAt, "completedAt");
            Objects.requireNonNull(took, "took");
            if (bytes < 0) throw new IllegalArgumentException("bytes < 0: " + bytes);
            if (completedAt.isBefore(cutAt)) throw new IllegalArgumentException("completed before cut");
        }

        /** Now minus the cut time of the point held; zero if the clock went back. */
        public Duration lag(Instant now) {
            Duration lag = Duration.between(cutAt, now);
            return lag.isNegative() ? Duration.ZERO : lag;
        }
    }

    private final String nodeId;
    private final Map<String, Round> last = new ConcurrentHashMap<>();

    public RoundLog(String nodeId) {
        this.nodeId = Objects.requireNonNull(nodeId, "nodeId");
    }

    public void completed(String volumeId, Round round) {
        last.put(volumeId, round);
    }

    /** The volume's copy left this node (deleted, or promoted: a primary has no lag). */
    public void forget(String volumeId) {
        last.remove(volumeId);
    }

    public Optional<Round> last(String volumeId) {
        return Optional.ofNullable(last.get(volumeId));
    }

    /** The Prometheus text format at {@code now}, one series per volume with a secondary here, sorted by volume. */
    public String prometheusText(Instant now) {
        var rounds = new TreeMap<>(last);
        if (rounds.isEmpty()) return "";
        var out = new StringBuilder();
        gauge(out, rounds, "csi4j_replica_lag_seconds",
                "Seconds since the cut of the point this node's copy of the volume holds.", r -> seconds(r.lag(now)));
        gauge(out, rounds, "csi4j_replica_last_sync_timestamp_seconds",
                "When this node's copy of the volume last completed a round (Unix time).", r -> seconds(r.completedAt()));
        gauge(out, rounds, "csi4j_replica_last_round_bytes",
                "Bytes received by the last complete round of this node's copy of the volume.", r -> Long.toString(r.bytes()));
        gauge(out, rounds, "csi4j_replica_last_round_seconds",
                "Duration of the last complete round of this node's copy of the volume.", r -> seconds(r.took()));
        return out.toString();
    }

    private void gauge(StringBuilder out, Map<String, Round> rounds, String name, String help,
            Function<Round, String> value) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n')
                .append("# TYPE ").append(name).append(" gauge\n");
        rounds.forEach((volume, r) -> out.append(name).append("{volume=\"").append(escape(volume)).append("\",node=\"")
                .append(escape(nodeId)).append("\"} ").append(value.apply(r)).append('\n'));
    }

    private static String seconds(Duration d) {
        return Double.toString(d.toNanos() / 1e9);
    }

    private static String seconds(Instant t) {
        return Double.toString(t.getEpochSecond() + t.getNano() / 1e9);
    }

    private static String escape(String label) {
        return label.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
