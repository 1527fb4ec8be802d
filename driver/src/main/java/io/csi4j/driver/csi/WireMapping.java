package io.csi4j.driver.csi;

import com.google.protobuf.Timestamp;
import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.VolumeContext;
import io.csi4j.driver.model.VolumeKind;
import io.csi4j.driver.model.VolumeListing;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.snapshot.GroupSnapshots;
import io.csi4j.driver.volume.AccessMode;
import io.csi4j.driver.volume.Capability;
import io.csi4j.driver.volume.CapacityRange;
import io.csi4j.driver.volume.NewVolume;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.Snapshot;
import io.csi4j.proto.csi.Topology;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.proto.csi.VolumeContentSource;
import io.csi4j.proto.csi.VolumeGroupSnapshot;
import io.csi4j.sdk.CsiException;
import io.grpc.stub.StreamObserver;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Wire messages to domain records and back; the only place (with the services) that knows both. The helpers every
 * service shares live here, not in one service borrowed by another: {@link #newVolume} (the controller's CreateVolume
 * and a node agent's ImportVolume), {@link #volume} (also a volume group's members), {@link #groupSnapshot} (also one
 * node's part of a group snapshot that spans nodes) and {@link #reply}.
 */
public final class WireMapping {
    private WireMapping() {}

    static Capability capability(VolumeCapability c) {
        AccessMode mode = switch (c.getAccessMode().getMode()) {
            case SINGLE_NODE_WRITER -> AccessMode.SINGLE_NODE_WRITER;
            case SINGLE_NODE_READER_ONLY -> AccessMode.SINGLE_NODE_READER_ONLY;
            case MULTI_NODE_READER_ONLY -> AccessMode.MULTI_NODE_READER_ONLY;
            case MULTI_NODE_SINGLE_WRITER -> AccessMode.MULTI_NODE_SINGLE_WRITER;
            case MULTI_NODE_MULTI_WRITER -> AccessMode.MULTI_NODE_MULTI_WRITER;
            case SINGLE_NODE_SINGLE_WRITER -> AccessMode.SINGLE_NODE_SINGLE_WRITER;
            case SINGLE_NODE_MULTI_WRITER -> AccessMode.SINGLE_NODE_MULTI_WRITER;
            case UNKNOWN, UNRECOGNIZED -> throw CsiException.invalidArgument("volume_capability.access_mode.mode is REQUIRED");
        };
        return switch (c.getAccessTypeCase()) {
            case BLOCK -> Capability.block(mode);
            case MOUNT -> new Capability(mode, VolumeKind.FILESYSTEM, c.getMount().getFsType(),
                    c.getMount().getMountFlagsList(), c.getMount().getVolumeMountGroup());
            case ACCESSTYPE_NOT_SET -> throw CsiException.invalidArgument("volume_capability.access_type (block or mount) is REQUIRED");
        };
    }

    static List<Capability> capabilities(List<VolumeCapability> caps) {
        return caps.stream().map(WireMapping::capability).toList();
    }

    static CapacityRange range(boolean present, io.csi4j.proto.csi.CapacityRange r) {
        return present ? new CapacityRange(r.getRequiredBytes(), r.getLimitBytes()) : CapacityRange.ANY;
    }

    static ContentSource source(boolean present, VolumeContentSource s) {
        if (!present) return ContentSource.NONE;
        return switch (s.getTypeCase()) {
            case SNAPSHOT -> new ContentSource.FromSnapshot(require(s.getSnapshot().getSnapshotId(), "volume_content_source.snapshot.snapshot_id"));
            case VOLUME -> new ContentSource.FromVolume(require(s.getVolume().getVolumeId(), "volume_content_source.volume.volume_id"));
            case TYPE_NOT_SET -> throw CsiException.invalidArgument("volume_content_source names neither a snapshot nor a volume");
        };
    }

    /** The nodes a topology list allows; a topology without our key allows any node. */
    static Optional<Set<String>> allowedNodes(List<Topology> requisite, List<Topology> preferred) {
        List<Topology> constraints = requisite.isEmpty() ? List.of() : requisite;
        if (constraints.isEmpty()) return Optional.empty();
        Set<String> nodes = new HashSet<>();
        for (Topology t : constraints) {
            String node = t.getSegmentsMap().get(DriverConfig.TOPOLOGY_KEY);
            if (node == null) return Optional.empty();
            nodes.add(node);
        }
        return Optional.of(nodes);
    }

    /** Topology messages are immutable and every volume of a node has the same one: built once per node. */
    private static final Map<String, Topology> TOPOLOGIES = new ConcurrentHashMap<>();

    static Topology topology(String nodeId) {
        return TOPOLOGIES.computeIfAbsent(nodeId, n -> Topology.newBuilder()
                .putSegments(DriverConfig.TOPOLOGY_KEY, DriverConfig.topologyValue(n)).build());
    }

    /** A volume as csi.v1 shows it: capacity, id, context, content source, topology. */
    public static Volume volume(VolumeRecord v) {
        return volume(v.id(), v.capacityBytes(), v.kind(), v.fsType(), v.source(), v.nodeId());
    }

    static Volume volume(VolumeListing v) {
        return volume(v.id(), v.capacityBytes(), v.kind(), v.fsType(), v.source(), v.nodeId());
    }

    private static Volume volume(String id, long capacityBytes, VolumeKind kind, String fsType, ContentSource source,
                                 String nodeId) {
        var b = Volume.newBuilder()
                .setVolumeId(id)
                .setCapacityBytes(capacityBytes)
                .putAllVolumeContext(VolumeContext.of(kind, fsType))
                .addAccessibleTopology(topology(nodeId));
        switch (source) {
            case ContentSource.None none -> {}
            case ContentSource.FromSnapshot s -> b.setContentSource(VolumeContentSource.newBuilder()
                    .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(s.snapshotId())));
            case ContentSource.FromVolume s -> b.setContentSource(VolumeContentSource.newBuilder()
                    .setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(s.volumeId())));
        }
        return b.build();
    }

    static Snapshot snapshot(SnapshotRecord s) {
        var b = Snapshot.newBuilder()
                .setSnapshotId(s.id())
                .setSourceVolumeId(s.sourceVolumeId())
                .setSizeBytes(s.sizeBytes())
                .setCreationTime(timestamp(s.createdAt()))
                .setReadyToUse(true);
        if (s.groupSnapshotId() != null) b.setGroupSnapshotId(s.groupSnapshotId());
        return b.build();
    }

    static Timestamp timestamp(Instant t) {
        return Timestamp.newBuilder().setSeconds(t.getEpochSecond()).setNanos(t.getNano()).build();
    }

    static String require(String value, String field) {
        if (value.isEmpty()) throw CsiException.invalidArgument(field + " is REQUIRED");
        return value;
    }

    /** Most entries a page holds, also when max_entries is 0 ("no restriction": the plugin picks). */
    static final int MAX_PAGE = 10_000;

    static int maxEntries(int maxEntries) {
        if (maxEntries < 0) throw CsiException.invalidArgument("max_entries must not be negative");
        return maxEntries == 0 ? MAX_PAGE : Math.min(maxEntries, MAX_PAGE);
    }

    /** A CreateVolume request in domain terms (also how a node agent reads one it is to fill by copying). */
    public static NewVolume newVolume(CreateVolumeRequest req) {
        return new NewVolume(req.getName(), range(req.hasCapacityRange(), req.getCapacityRange()),
                capabilities(req.getVolumeCapabilitiesList()), req.getParametersMap(),
                req.getMutableParametersMap(), source(req.hasVolumeContentSource(), req.getVolumeContentSource()),
                req.hasAccessibilityRequirements()
                        ? allowedNodes(req.getAccessibilityRequirements().getRequisiteList(),
                                req.getAccessibilityRequirements().getPreferredList())
                        : Optional.empty());
    }

    /** A group snapshot as csi.v1 shows it (also one node's part of a group snapshot that spans nodes). */
    public static VolumeGroupSnapshot groupSnapshot(GroupSnapshots.GroupSnapshot g) {
        var b = VolumeGroupSnapshot.newBuilder()
                .setGroupSnapshotId(g.group().id())
                .setCreationTime(timestamp(g.group().createdAt()))
                .setReadyToUse(true);
        for (SnapshotRecord s : g.members()) b.addSnapshots(snapshot(s));
        return b.build();
    }

    /** Answers a unary call: the one response, then completion. */
    public static <T> void reply(StreamObserver<T> out, T response) {
        out.onNext(response);
        out.onCompleted();
    }
}
