package io.csi4j.driver.volume;

import io.csi4j.driver.domain.DomainException;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The StorageClass parameters of a replicated volume: {@code csi4j.io/replicas} (1, 2 or 3; 1, the default, is an
 * ordinary volume) and {@code csi4j.io/replication-interval} (how often the primary cuts a point for its secondaries:
 * {@code 5s} to {@code 24h}, default {@code 30s}; a duration of whole hours, minutes and seconds such as {@code 90s}
 * or {@code 1h30m}; only with more than one replica) and {@code csi4j.io/replica-spread-key} (a topology key whose values
 * the replicas' nodes must all differ in, {@link #spreadKey}; only with more than one replica). Anything else is INVALID (INVALID_ARGUMENT at the edge).
 */
public record ReplicationParameters(int replicas, Duration interval) {
    public static final String REPLICAS = "csi4j.io/replicas";
    public static final String INTERVAL = "csi4j.io/replication-interval";
    /** A topology key (e.g. {@code topology.kubernetes.io/zone}) whose values every replica's node must differ in: {@link #spreadKey}. */
    public static final String SPREAD_KEY = "csi4j.io/replica-spread-key";
    public static final int MAX_REPLICAS = 3;
    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(30);
    public static final Duration MIN_INTERVAL = Duration.ofSeconds(5);
    public static final Duration MAX_INTERVAL = Duration.ofHours(24);
    public static final ReplicationParameters NONE = new ReplicationParameters(1, DEFAULT_INTERVAL);

    private static final Pattern DURATION = Pattern.compile("(?:(\\d{1,5})h)?(?:(\\d{1,7})m)?(?:(\\d{1,9})s)?");

    /** What these creation parameters ask; unknown keys are not this class's business. */
    public static ReplicationParameters of(Map<String, String> parameters) {
        String replicasText = parameters.get(REPLICAS);
        String intervalText = parameters.get(INTERVAL);
        int replicas = replicasText == null ? 1 : replicas(replicasText);
        spreadKey(parameters, replicas);
        if (intervalText == null) return new ReplicationParameters(replicas, DEFAULT_INTERVAL);
        if (replicas == 1) {
            throw DomainException.invalid(INTERVAL + " applies only with " + REPLICAS + " of 2 or 3 (asked: "
                    + (replicasText == null ? "none, so 1" : replicasText) + ")");
        }
        return new ReplicationParameters(replicas, interval(intervalText));
    }

    /**
     * What a volume's creation parameters ask, with the interval a ControllerModifyVolume set in its mutable parameters
     * (a VolumeAttributesClass) in place of the creation one.
     */
    public static ReplicationParameters of(Map<String, String> parameters, Map<String, String> mutableParameters) {
        ReplicationParameters created = of(parameters);
        String changed = mutableParameters.get(INTERVAL);
        return changed == null || !created.replicated() ? created : new ReplicationParameters(created.replicas, interval(changed));
    }

    /**
     * Checks a ControllerModifyVolume of these keys against a volume made with {@code parameters}: the interval of a
     * replicated volume may change (a valid duration); the replica count never does (the replica set is fixed at
     * creation: the PV's node affinity naming every replica's node is immutable). INVALID otherwise, the code CSI gives
     * "invalid mutable parameter keys or values, or the specified volume cannot support the specified parameters".
     */
    public static void checkModify(Map<String, String> parameters, Map<String, String> mutableParameters) {
        if (mutableParameters.containsKey(REPLICAS)) {
            throw DomainException.invalid(REPLICAS + " cannot be modified: a volume's replica set is fixed at creation (its "
                    + "node affinity names every replica's node and is immutable); clone it into a new volume instead");
        }
        String changed = mutableParameters.get(INTERVAL);
        if (changed == null) return;
        if (!of(parameters).replicated()) {
            throw DomainException.invalid(INTERVAL + " applies only to a volume created with " + REPLICAS + " of 2 or 3");
        }
        interval(changed);
    }

    /**
     * The topology key the replicas must spread over ({@link #SPREAD_KEY}): each replica on a node with a different value
     * of it, a node without it holding none. Empty when not given. INVALID for a key that is not a topology key, or given
     * with one replica (as the interval).
     */
    public static java.util.Optional<String> spreadKey(Map<String, String> parameters) {
        String replicasText = parameters.get(REPLICAS);
        return spreadKey(parameters, replicasText == null ? 1 : replicas(replicasText));
    }

    private static java.util.Optional<String> spreadKey(Map<String, String> parameters, int replicas) {
        String key = parameters.get(SPREAD_KEY);
        if (key == null) return java.util.Optional.empty();
        if (replicas == 1) throw DomainException.invalid(SPREAD_KEY + " applies only with " + REPLICAS + " of 2 or 3");
        if (!io.csi4j.driver.DriverConfig.topologyKey(key)) {
            throw DomainException.invalid(SPREAD_KEY + " must be a topology key such as topology.kubernetes.io/zone, not '" + key + "'");
        }
        return java.util.Optional.of(key);
    }

    /**
     * Checks CreateVolume's {@code mutable_parameters} (a VolumeAttributesClass named at creation) against its
     * {@code parameters}, and returns the keys that are not this class's (the engine's). The interval of a replicated
     * volume may be given there and takes precedence over the StorageClass's (the spec: "values specified in
     * mutable_parameters MUST take precedence over the values from parameters"; {@link #of(Map, Map)} reads it so), as
     * ControllerModifyVolume may change it later; the replica count may not (INVALID, as in {@link #checkModify}).
     */
    public static Map<String, String> checkCreate(Map<String, String> parameters, Map<String, String> mutableParameters) {
        if (mutableParameters.containsKey(REPLICAS)) {
            throw DomainException.invalid(REPLICAS + " is not a mutable parameter: a volume's replica set is fixed at creation"
                    + " (its node affinity names every replica's node and is immutable); give it in the StorageClass parameters");
        }
        checkModify(parameters, mutableParameters);
        return engineKeys(mutableParameters);
    }

    /** The mutable parameters without the interval: what the engine checks and applies. */
    public static Map<String, String> engineKeys(Map<String, String> mutableParameters) {
        if (!mutableParameters.containsKey(INTERVAL)) return mutableParameters;
        var rest = new java.util.HashMap<>(mutableParameters);
        rest.remove(INTERVAL);
        return Map.copyOf(rest);
    }

    public boolean replicated() {
        return replicas > 1;
    }

    private static int replicas(String text) {
        return switch (text) {
            case "1" -> 1;
            case "2" -> 2;
            case "3" -> 3;
            default -> throw DomainException.invalid(REPLICAS + " must be 1, 2 or 3, not '" + text + "'");
        };
    }

    private static Duration interval(String text) {
        var m = DURATION.matcher(text);
        if (text.isEmpty() || !m.matches()) {
            throw DomainException.invalid(INTERVAL + " must be a duration such as 30s, 5m or 1h30m, not '" + text + "'");
        }
        Duration d = Duration.ofHours(number(m.group(1))).plusMinutes(number(m.group(2))).plusSeconds(number(m.group(3)));
        if (d.compareTo(MIN_INTERVAL) < 0 || d.compareTo(MAX_INTERVAL) > 0) {
            throw DomainException.invalid(INTERVAL + " must be from 5s to 24h, not '" + text + "' (" + d.toSeconds() + " s)");
        }
        return d;
    }

    private static long number(String digits) {
        return digits == null ? 0 : Long.parseLong(digits);
    }
}
