package io.csi4j.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Everything the suite needs to hold one plugin to the spec.
 *
 * @param endpoint           the CSI endpoint: {@code unix:///abs.sock}, {@code unix://rel.sock}, a bare path, or {@code tcp://host:port}
 * @param addonsEndpoint     the CSI-Addons endpoint (identity + volumegroup); without it those tests are not applicable
 * @param nodeEndpoint       a split deployment's node plugin (Identity + Node), when {@code endpoint} serves only the
 *                           controller side; volumes the suite creates then prefer and require that node's topology,
 *                           as a CO with late binding asks, so the node under test can stage them
 * @param stagingDir         where the suite creates staging directories (the CO's job); a temp dir when empty
 * @param targetDir          where the suite creates the parents of target paths; a temp dir when empty
 * @param volumeSize         bytes asked for each volume (required_bytes); expansion asks for twice this
 * @param params             CreateVolume parameters
 * @param mutableParams      ControllerModifyVolume parameters; the modify success test needs at least one
 * @param secrets            passed in every request that has a secrets field (the spec lets a CO do that)
 * @param accessType         mount or block volumes
 * @param fsType             MountVolume.fs_type; empty lets the plugin choose
 * @param focus              only tests whose name this regex finds in are run
 * @param idempotencyRepeats how many times each mutating call is repeated with identical arguments
 * @param callTimeout        the deadline of every single RPC: the suite never waits longer for one answer
 * @param keepGoing          when the plugin stops answering, reconnect (waiting up to one call timeout for it to
 *                           come back, as under a supervisor) and go on, instead of leaving the rest not run
 */
public record SanityConfig(
        String endpoint,
        Optional<String> addonsEndpoint,
        Optional<String> nodeEndpoint,
        Optional<Path> stagingDir,
        Optional<Path> targetDir,
        long volumeSize,
        Map<String, String> params,
        Map<String, String> mutableParams,
        Map<String, String> secrets,
        AccessType accessType,
        String fsType,
        Optional<Pattern> focus,
        int idempotencyRepeats,
        Duration callTimeout,
        boolean keepGoing) {

    public static final long DEFAULT_VOLUME_SIZE = 1L << 30;
    public static final int DEFAULT_REPEATS = 3;
    public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(60);

    public SanityConfig {
        Objects.requireNonNull(endpoint, "endpoint");
        if (endpoint.isBlank()) throw new IllegalArgumentException("endpoint must not be empty");
        Objects.requireNonNull(addonsEndpoint);
        Objects.requireNonNull(nodeEndpoint);
        Objects.requireNonNull(stagingDir);
        Objects.requireNonNull(targetDir);
        if (volumeSize <= 0) throw new IllegalArgumentException("volume size must be positive: " + volumeSize);
        params = Map.copyOf(params);
        mutableParams = Map.copyOf(mutableParams);
        secrets = Map.copyOf(secrets);
        Objects.requireNonNull(accessType);
        fsType = fsType == null ? "" : fsType;
        Objects.requireNonNull(focus);
        if (idempotencyRepeats < 1) throw new IllegalArgumentException("idempotency repeats must be at least 1");
        if (callTimeout.isNegative() || callTimeout.isZero()) throw new IllegalArgumentException("call timeout must be positive");
    }

    /** Secret values never reach a printout: only their keys are shown. */
    @Override
    public String toString() {
        return "SanityConfig[endpoint=" + endpoint + ", addonsEndpoint=" + addonsEndpoint + ", nodeEndpoint=" + nodeEndpoint + ", stagingDir=" + stagingDir
                + ", targetDir=" + targetDir + ", volumeSize=" + volumeSize + ", params=" + params + ", mutableParams=" + mutableParams
                + ", secrets=" + secrets.keySet() + " (values redacted), accessType=" + accessType + ", fsType=" + fsType
                + ", focus=" + focus + ", idempotencyRepeats=" + idempotencyRepeats + ", callTimeout=" + callTimeout
                + ", keepGoing=" + keepGoing + "]";
    }

    public static Builder builder(String endpoint) {
        return new Builder(endpoint);
    }

    /** True when the test of this name is selected by {@link #focus()}. */
    public boolean selects(String testName) {
        return focus.map(p -> p.matcher(testName).find()).orElse(true);
    }

    /**
     * Reads a secrets file: one {@code key=value} or {@code key: value} per line, {@code #} starts a comment.
     * Keys must be what the spec allows (alphanumerics, '-', '_', '.').
     */
    public static Map<String, String> readSecrets(Path file) throws IOException {
        return parsePairs(Files.readAllLines(file), "secrets file " + file);
    }

    /** Parses {@code k=v} items (as given on a command line) into an ordered map. */
    public static Map<String, String> parsePairs(List<String> lines, String where) {
        Map<String, String> out = new LinkedHashMap<>();
        int number = 0;
        for (String raw : lines) {
            number++;
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) continue;
            int eq = line.indexOf('=');
            int colon = line.indexOf(':');
            int cut = eq < 0 ? colon : colon < 0 ? eq : Math.min(eq, colon);
            if (cut <= 0) throw new IllegalArgumentException(where + ": line " + number + " is not key=value");
            String key = line.substring(0, cut).strip();
            String value = line.substring(cut + 1).strip();
            if (!key.matches("[A-Za-z0-9._-]+")) {
                throw new IllegalArgumentException(where + ": line " + number + ": key '" + key + "' has characters the spec does not allow");
            }
            out.put(key, unquote(value));
        }
        return out;
    }

    /**
     * Parses a size as given on a command line: bytes, or a number with K, M, G, T (powers of 1000) or
     * Ki, Mi, Gi, Ti (powers of 1024), e.g. {@code 1Gi}, {@code 512Mi}, {@code 1073741824}.
     */
    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*([KMGT]i?)?[bB]?");

    public static long parseSize(String text) {
        var m = SIZE.matcher(text.strip());
        if (!m.matches()) throw new IllegalArgumentException("not a size: '" + text + "' (use e.g. 1Gi, 512Mi, 1073741824)");
        long number = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "" : m.group(2);
        int power = unit.isEmpty() ? 0 : "KMGT".indexOf(unit.charAt(0)) + 1;
        long base = unit.endsWith("i") ? 1024 : 1000;
        long size = number;
        for (int i = 0; i < power; i++) size = Math.multiplyExact(size, base);
        return size;
    }

    private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m)?");

    /** Parses a duration as given on a command line: seconds, or a number with ms, s or m ({@code 500ms}, {@code 30s}, {@code 2m}). */
    public static Duration parseDuration(String text) {
        var m = DURATION.matcher(text.strip());
        if (!m.matches()) throw new IllegalArgumentException("not a duration: '" + text + "' (use e.g. 60, 30s, 500ms, 2m)");
        long number = Long.parseLong(m.group(1));
        return switch (m.group(2) == null ? "s" : m.group(2)) {
            case "ms" -> Duration.ofMillis(number);
            case "m" -> Duration.ofMinutes(number);
            default -> Duration.ofSeconds(number);
        };
    }

    private static String unquote(String value) {
        if (value.length() >= 2 && (value.startsWith("\"") && value.endsWith("\"") || value.startsWith("'") && value.endsWith("'"))) {
            return value.substring(1, value.length() - 1);
        }
        return value;
    }

    public static final class Builder {
        private final String endpoint;
        private String addonsEndpoint;
        private String nodeEndpoint;
        private Path stagingDir;
        private Path targetDir;
        private long volumeSize = DEFAULT_VOLUME_SIZE;
        private Map<String, String> params = Map.of();
        private Map<String, String> mutableParams = Map.of();
        private Map<String, String> secrets = Map.of();
        private AccessType accessType = AccessType.MOUNT;
        private String fsType = "";
        private Pattern focus;
        private int idempotencyRepeats = DEFAULT_REPEATS;
        private Duration callTimeout = DEFAULT_CALL_TIMEOUT;
        private boolean keepGoing;

        private Builder(String endpoint) {
            this.endpoint = endpoint;
        }

        public Builder addonsEndpoint(String value) { this.addonsEndpoint = value; return this; }
        public Builder nodeEndpoint(String value) { this.nodeEndpoint = value; return this; }
        public Builder stagingDir(Path value) { this.stagingDir = value; return this; }
        public Builder targetDir(Path value) { this.targetDir = value; return this; }
        public Builder volumeSize(long value) { this.volumeSize = value; return this; }
        public Builder params(Map<String, String> value) { this.params = value; return this; }
        public Builder mutableParams(Map<String, String> value) { this.mutableParams = value; return this; }
        public Builder secrets(Map<String, String> value) { this.secrets = value; return this; }
        public Builder accessType(AccessType value) { this.accessType = value; return this; }
        public Builder fsType(String value) { this.fsType = value; return this; }
        public Builder focus(String regex) { this.focus = regex == null || regex.isEmpty() ? null : Pattern.compile(regex); return this; }
        public Builder idempotencyRepeats(int value) { this.idempotencyRepeats = value; return this; }
        public Builder callTimeout(Duration value) { this.callTimeout = value; return this; }
        public Builder keepGoing(boolean value) { this.keepGoing = value; return this; }

        public SanityConfig build() {
            return new SanityConfig(endpoint, Optional.ofNullable(addonsEndpoint), Optional.ofNullable(nodeEndpoint), Optional.ofNullable(stagingDir),
                    Optional.ofNullable(targetDir), volumeSize, params, mutableParams, secrets, accessType, fsType,
                    Optional.ofNullable(focus), idempotencyRepeats, callTimeout, keepGoing);
        }
    }
}
