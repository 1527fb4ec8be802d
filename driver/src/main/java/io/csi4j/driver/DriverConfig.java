package io.csi4j.driver;

import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.engine.PoolReserve;
import io.csi4j.driver.storage.DataDir;
import java.nio.file.Path;
import java.util.OptionalLong;
import io.csi4j.driver.id.ObjectId;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Everything the driver is configured with. Built by {@code csi4j serve} from flags; tests build it
 * directly with {@link #defaults(Path, String)}.
 */
public record DriverConfig(
        Path dataDir,
        String nodeId,
        EngineKind engine,
        OptionalLong poolSizeBytes,
        Mode mode,
        int maxVolumesPerNode,
        long defaultVolumeBytes,
        double overcommitRatio,
        GroupDeletePolicy groupDeletePolicy,
        boolean oneGroupPerVolume,
        int maxGroupMembers,
        PoolReserve poolReserve,
        /* Extra topology segments of this node ({@code --topology}, e.g. a zone), besides {@link #TOPOLOGY_KEY}. */
        Map<String, String> topology) {

    /** Which CSI services this process serves: a unified plugin, or the controller / node half. */
    public enum Mode { ALL, CONTROLLER, NODE;
        public boolean controller() { return this != NODE; }
        public boolean node() { return this != CONTROLLER; }
    }

    /** Seed semantics delete a group's volumes with it; ceph-csi's refuses to delete a non-empty group. */
    public enum GroupDeletePolicy { DELETE_VOLUMES, RETAIN_VOLUMES }

    public static final String PLUGIN_NAME = "local.csi4j.io";
    public static final String TOPOLOGY_KEY = "topology.csi4j.io/node";
    /** GetPluginInfo manifest entries naming the node's extra topology segments: this prefix, then the key. */
    public static final String TOPOLOGY_MANIFEST_PREFIX = "topology:";

    public DriverConfig {
        dataDir = dataDir.toAbsolutePath().normalize();
        if (nodeId == null || nodeId.isBlank()) throw new IllegalArgumentException("node id must not be empty");
        if (overcommitRatio < 1.0) throw new IllegalArgumentException("overcommit ratio must be >= 1.0");
        if (maxVolumesPerNode < 0) throw new IllegalArgumentException("max volumes per node must be >= 0");
        if (maxGroupMembers < 1) throw new IllegalArgumentException("max group members must be >= 1");
        if (poolReserve == null) throw new IllegalArgumentException("pool reserve must be given");
        topology = Map.copyOf(new TreeMap<>(topology));
        checkTopology(topology);
    }

    /** Extra topology segments: valid keys and values, and never the node's own key. IllegalArgumentException otherwise. */
    public static void checkTopology(Map<String, String> topology) {
        if (topology.containsKey(TOPOLOGY_KEY)) throw new IllegalArgumentException(TOPOLOGY_KEY + " is the node's own segment; it cannot be given");
        topology.forEach((key, value) -> {
            if (!topologyKey(key)) throw new IllegalArgumentException("topology key '" + key + "' is not a name such as topology.kubernetes.io/zone");
            if (!TOPOLOGY_VALUE.matcher(value).matches()) {
                throw new IllegalArgumentException("topology value '" + value + "' of " + key + " is not 1 to 63 letters, digits, '-', '_' or '.' (alphanumeric at both ends)");
            }
        });
    }

    /** Without extra topology segments. */
    public DriverConfig(Path dataDir, String nodeId, EngineKind engine, OptionalLong poolSizeBytes, Mode mode,
                        int maxVolumesPerNode, long defaultVolumeBytes, double overcommitRatio,
                        GroupDeletePolicy groupDeletePolicy, boolean oneGroupPerVolume, int maxGroupMembers,
                        PoolReserve poolReserve) {
        this(dataDir, nodeId, engine, poolSizeBytes, mode, maxVolumesPerNode, defaultVolumeBytes, overcommitRatio,
                groupDeletePolicy, oneGroupPerVolume, maxGroupMembers, poolReserve, Map.of());
    }

    /** With the default pool reserve ({@link PoolReserve#DEFAULT}). */
    public DriverConfig(Path dataDir, String nodeId, EngineKind engine, OptionalLong poolSizeBytes, Mode mode,
                        int maxVolumesPerNode, long defaultVolumeBytes, double overcommitRatio,
                        GroupDeletePolicy groupDeletePolicy, boolean oneGroupPerVolume, int maxGroupMembers) {
        this(dataDir, nodeId, engine, poolSizeBytes, mode, maxVolumesPerNode, defaultVolumeBytes, overcommitRatio,
                groupDeletePolicy, oneGroupPerVolume, maxGroupMembers, PoolReserve.DEFAULT);
    }

    private static final Pattern TOPOLOGY_VALUE =
            Pattern.compile("[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?");

    private static final Pattern TOPOLOGY_PREFIX = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    /** A key CSI and Kubernetes accept: an optional DNS-subdomain prefix (253 characters) and '/', then a 63-character name. */
    public static boolean topologyKey(String key) {
        int slash = key.lastIndexOf('/');
        String name = key.substring(slash + 1);
        if (!TOPOLOGY_VALUE.matcher(name).matches()) return false;
        if (slash < 0) return true;
        String prefix = key.substring(0, slash);
        return prefix.length() <= 253 && TOPOLOGY_PREFIX.matcher(prefix).matches();
    }

    /**
     * The node's value under {@link #TOPOLOGY_KEY}: the node id when it is a valid topology value
     * (63 characters, alphanumeric at both ends, dashes, underscores and dots between), else a
     * stable name derived from it, so NodeGetInfo and every Volume report a topology a CO accepts.
     */
    public static String topologyValue(String nodeId) {
        if (TOPOLOGY_VALUE.matcher(nodeId).matches()) return nodeId;
        return "node" + ObjectId.nodeTag(nodeId).replace("_", "-");
    }

    /** What lives in {@link #dataDir}, named once. */
    public DataDir layout() {
        return new DataDir(dataDir);
    }

    public String topologyValue() {
        return topologyValue(nodeId);
    }

    public static DriverConfig defaults(Path dataDir, String nodeId) {
        return new DriverConfig(dataDir, nodeId, EngineKind.IMAGE, OptionalLong.empty(), Mode.ALL, 0,
                1L << 30, 1.0, GroupDeletePolicy.DELETE_VOLUMES, true, 64);
    }

    public DriverConfig withEngine(EngineKind kind) {
        return new DriverConfig(dataDir, nodeId, kind, poolSizeBytes, mode, maxVolumesPerNode, defaultVolumeBytes,
                overcommitRatio, groupDeletePolicy, oneGroupPerVolume, maxGroupMembers, poolReserve, topology);
    }

    public DriverConfig withGroupDeletePolicy(GroupDeletePolicy policy) {
        return new DriverConfig(dataDir, nodeId, engine, poolSizeBytes, mode, maxVolumesPerNode, defaultVolumeBytes,
                overcommitRatio, policy, oneGroupPerVolume, maxGroupMembers, poolReserve, topology);
    }
}
