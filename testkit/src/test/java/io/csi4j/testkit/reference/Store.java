package io.csi4j.testkit.reference;

import com.google.protobuf.Timestamp;
import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.proto.csi.VolumeContentSource;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

/** Everything the reference plugin knows, guarded by the store's monitor. */
final class Store {
    static final String NODE_ID = "reference-node-1";
    static final String TOPOLOGY_KEY = "topology.reference.csi4j.io/node";

    /** This (only) node's topology. */
    io.csi4j.proto.csi.Topology nodeTopology() {
        String value = flawed(Flaw.LONG_TOPOLOGY_VALUE) ? NODE_ID + "-" + "x".repeat(60) : NODE_ID;
        return io.csi4j.proto.csi.Topology.newBuilder().putSegments(TOPOLOGY_KEY, value).build();
    }

    final Path pool;
    final Options options;
    final Set<Flaw> flaws;

    final NavigableMap<String, VolumeRecord> volumes = new TreeMap<>();
    final NavigableMap<String, SnapshotRecord> snapshots = new TreeMap<>();
    final NavigableMap<String, GroupSnapshotRecord> groupSnapshots = new TreeMap<>();
    final NavigableMap<String, VolumeGroupRecord> volumeGroups = new TreeMap<>();
    private long sequence;
    /** What {@link Flaw#EXITS_ON_NEGATIVE_MAX_ENTRIES} does: the plugin's servers go away (set by ReferencePlugin). */
    volatile Runnable exit = () -> { };

    Store(Path pool, Options options, Set<Flaw> flaws) {
        this.pool = pool;
        this.options = options;
        this.flaws = flaws.isEmpty() ? EnumSet.noneOf(Flaw.class) : EnumSet.copyOf(flaws);
    }

    boolean flawed(Flaw flaw) {
        return flaws.contains(flaw);
    }

    synchronized String nextId(String prefix) {
        return prefix + "-" + String.format("%06d", ++sequence);
    }

    static Timestamp now() {
        Instant now = Instant.now();
        return Timestamp.newBuilder().setSeconds(now.getEpochSecond()).setNanos(now.getNano()).build();
    }

    record Publication(Path target, VolumeCapability capability, boolean readonly, boolean mounted) {}

    static final class VolumeRecord {
        final String id;
        final String name;
        final boolean block;
        final Map<String, String> parameters;
        final VolumeContentSource source;
        final Map<String, String> context;
        final Path data;
        long capacity;
        long nodeSize;
        String group;
        String controllerNode;
        boolean controllerReadonly;
        VolumeCapability controllerCapability;
        Path stagedAt;
        VolumeCapability stagedCapability;
        final Map<Path, Publication> published = new LinkedHashMap<>();
        final Map<String, String> mutable = new LinkedHashMap<>();
        final List<io.csi4j.proto.csi.Topology> topology = new ArrayList<>();

        VolumeRecord(String id, String name, boolean block, long capacity, Map<String, String> parameters,
                     VolumeContentSource source, Path data) {
            this.id = id;
            this.name = name;
            this.block = block;
            this.capacity = capacity;
            this.nodeSize = capacity;
            this.parameters = Map.copyOf(parameters);
            this.source = source;
            this.context = Map.of("reference.csi4j.io/name", name);
            this.data = data;
        }

        /** Where the volume's current bytes are: its writable publication, else its backing store. */
        Path live() {
            return published.values().stream().filter(p -> !p.readonly()).map(Publication::target).findFirst().orElse(data);
        }

        boolean inUse() {
            return controllerNode != null || stagedAt != null || !published.isEmpty();
        }
    }

    static final class SnapshotRecord {
        final String id;
        final String name;
        final String sourceVolumeId;
        final Timestamp created;
        final long size;
        final boolean block;
        Path data;
        String groupSnapshotId = "";

        SnapshotRecord(String id, String name, String sourceVolumeId, long size, boolean block, Path data) {
            this.id = id;
            this.name = name;
            this.sourceVolumeId = sourceVolumeId;
            this.created = now();
            this.size = size;
            this.block = block;
            this.data = data;
        }
    }

    record GroupSnapshotRecord(String id, String name, List<String> sourceVolumeIds, List<String> snapshotIds, Timestamp created) {}

    static final class VolumeGroupRecord {
        final String id;
        final String name;
        final Map<String, String> parameters;
        final Set<String> volumeIds = new LinkedHashSet<>();

        VolumeGroupRecord(String id, String name, Map<String, String> parameters) {
            this.id = id;
            this.name = name;
            this.parameters = Map.copyOf(parameters);
        }
    }

    /**
     * One page of a sorted map: the token is "after:&lt;last id&gt;", so paging goes on (without
     * duplicates) when entries are added or removed in between. Anything else is an invalid token.
     */
    <R, E> Page<E> page(NavigableMap<String, R> map, int maxEntries, String token, Function<R, E> entry) {
        if (maxEntries < 0) throw Rpc.invalid("max_entries must not be negative");
        NavigableMap<String, R> rest = map;
        if (!token.isEmpty()) {
            if (!token.startsWith("after:")) throw Rpc.aborted("invalid starting_token");
            rest = map.tailMap(token.substring("after:".length()), false);
        }
        List<E> entries = new ArrayList<>();
        String last = null;
        for (Map.Entry<String, R> e : rest.entrySet()) {
            if (maxEntries > 0 && entries.size() == maxEntries && !flawed(Flaw.IGNORES_MAX_ENTRIES)) {
                return new Page<>(entries, flawed(Flaw.FORGETS_NEXT_TOKEN) ? "" : "after:" + last);
            }
            entries.add(entry.apply(e.getValue()));
            last = e.getKey();
        }
        return new Page<>(entries, "");
    }

    record Page<E>(List<E> entries, String nextToken) {}
}
