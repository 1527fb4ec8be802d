package io.csi4j.driver;

import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.engine.PoolReserve;
import io.csi4j.driver.storage.DataDir;
import java.nio.file.Path;
import java.util.OptionalLong;
import io.csi4j.driver.id.ObjectId;
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
        PoolReserve poolReserve) {

    /** Which CSI services this process serves: a unified plugin, or the controller / node half. */
    public enum Mode { ALL, CONTROLLER, NODE;
        public boolean controller() { return this != NODE; }
        public boolean node() { return this != CONTROLLER; }
    }

    /** Seed semantics delete a group's volumes with it; ceph-csi's refuses to delete a non-empty group. */
    public enum GroupDeletePolicy { DELETE_VOLUMES, RETAIN_VOLUMES }

    public static final String PLUGIN_NAME = "local.csi4j.io";
    public static final String TOPOLOGY_KEY = "topology.csi4j.io/node";

    public DriverConfig {
        dataDir = dataDir.toAbsolutePath().normalize();
        if (nodeId == null || nodeId.isBlank()) throw new IllegalArgumentException("node id must not be empty");
        if (overcommitRatio < 1.0) throw new IllegalArgumentException("overcommit ratio must be >= 1.0");
        if (maxVolumesPerNode < 0) throw new IllegalArgumentException("max volumes per node must be >= 0");
        if (maxGroupMembers < 1) throw new IllegalArgumentException("max group members must be >= 1");
        if (poolReserve == null) throw new IllegalArgumentException("pool reserve must be given");
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
                overcommitRatio, groupDeletePolicy, oneGroupPerVolume, maxGroupMembers, poolReserve);
    }

    public DriverConfig withGroupDeletePolicy(GroupDeletePolicy policy) {
        return new DriverConfig(dataDir, nodeId, engine, poolSizeBytes, mode, maxVolumesPerNode, defaultVolumeBytes,
                overcommitRatio, policy, oneGroupPerVolume, maxGroupMembers, poolReserve);
    }
}
