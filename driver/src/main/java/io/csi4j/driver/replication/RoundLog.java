package io.csi4j.driver.replication;

import io.csi4j.driver.json.Json;
import io.csi4j.driver.os.Durable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.logging.Logger;

/**
 * What the last complete round of each secondary on this node did, for metrics, {@code cluster status} and
 * GetVolumeReplicationInfo (docs/replication.md, "Observability"). Kept durably beside the replica's state (one
 * {@code <volume>.round} file in the same directory, written like {@link ReplicaStates}' files: a temporary file,
 * fsynced, renamed, the directory fsynced) and loaded at start-up, so an agent restart does not turn a secondary's
 * figures into "no round yet" until its next round: the lag it then shows is still now minus the cut time of the
 * point the copy holds, and the point is durable before its figures (a crash between the two shows the round before,
 * an older cut: a lag too high, never too low). Lag is now minus the cut time of the point the copy holds; the cut
 * time recorded is taken just before the primary was asked to cut, so the lag shown is never less than the true one.
 */
public final class RoundLog {
    private static final Logger LOG = Logger.getLogger(RoundLog.class.getName());
    static final String SUFFIX = ".round";
    private static final String TMP = ".tmp";

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

        String toJson() {
            var m = new LinkedHashMap<String, Object>();
            m.put("cutAt", cutAt.toString());
            m.put("completedAt", completedAt.toString());
            m.put("bytes", Long.toString(bytes));
            m.put("took", took.toString());
            return Json.write(m) + "\n";
        }

        /** @throws IllegalArgumentException for a text that is not one */
        static Round fromJson(String text) {
            Map<String, String> m = Json.parseStringMap(text.strip());
            try {
                return new Round(Instant.parse(m.get("cutAt")), Instant.parse(m.get("completedAt")),
                        Long.parseLong(m.get("bytes")), Duration.parse(m.get("took")));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("not a round: " + text, e);
            }
        }
    }

    private final String nodeId;
    private final Optional<Path> dir;
    private final Map<String, Round> last = new ConcurrentHashMap<>();

    /** In memory only (tests, and an agent without replication). */
    public RoundLog(String nodeId) {
        this.nodeId = Objects.requireNonNull(nodeId, "nodeId");
        this.dir = Optional.empty();
    }

    /**
     * Durable in {@code dir} (the replication state directory): every round found there is loaded now; a file that
     * does not parse (it cannot be half-written: renamed into place) is logged and left out.
     */
    public RoundLog(String nodeId, Path dir) {
        this.nodeId = Objects.requireNonNull(nodeId, "nodeId");
        this.dir = Optional.of(dir);
        try {
            Durable.createDirectories(dir);
            try (var files = Files.list(dir)) {
                for (Path p : files.filter(p -> p.getFileName().toString().endsWith(SUFFIX)).toList()) {
                    String name = p.getFileName().toString();
                    try {
                        last.put(name.substring(0, name.length() - SUFFIX.length()), Round.fromJson(Files.readString(p, StandardCharsets.UTF_8)));
                    } catch (IllegalArgumentException | NoSuchFileException e) {
                        LOG.warning(() -> "ignoring the last round's figures in " + p + ": " + e);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading the last rounds in " + dir, e);
        }
    }

    /** Durable (when this log is) before it returns. */
    public void completed(String volumeId, Round round) {
        Objects.requireNonNull(round, "round");
        dir.ifPresent(d -> writeAtomically(file(d, volumeId), round.toJson()));
        last.put(volumeId, round);
    }

    /** The volume's copy left this node (deleted, or promoted: a primary has no lag); its file goes too. */
    public void forget(String volumeId) {
        last.remove(volumeId);
        dir.ifPresent(d -> {
            try {
                if (Files.deleteIfExists(file(d, volumeId))) Durable.fsyncDirectory(d);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    private static Path file(Path dir, String volumeId) {
        if (volumeId.isEmpty() || volumeId.startsWith(".") || volumeId.contains("/")) {
            throw new IllegalArgumentException("not a volume id to name a file by: " + volumeId);
        }
        return dir.resolve(volumeId + SUFFIX);
    }

    private static void writeAtomically(Path file, String text) {
        Path tmp = file.resolveSibling(file.getFileName() + TMP);   // ReplicaStates removes leftover *.tmp at start-up
        try {
            Files.writeString(tmp, text, StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
            Durable.fsync(tmp);
            Durable.atomicRename(tmp, file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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
