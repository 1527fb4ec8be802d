package io.csi4j.testkit.reference;

import static io.csi4j.testkit.reference.Rpc.require;

import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.ControllerExpandVolumeRequest;
import io.csi4j.proto.csi.ControllerExpandVolumeResponse;
import io.csi4j.proto.csi.ControllerGetCapabilitiesRequest;
import io.csi4j.proto.csi.ControllerGetCapabilitiesResponse;
import io.csi4j.proto.csi.ControllerGetVolumeRequest;
import io.csi4j.proto.csi.ControllerGetVolumeResponse;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.ControllerModifyVolumeRequest;
import io.csi4j.proto.csi.ControllerModifyVolumeResponse;
import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.ControllerPublishVolumeResponse;
import io.csi4j.proto.csi.ControllerServiceCapability;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeResponse;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateSnapshotResponse;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.CreateVolumeResponse;
import io.csi4j.proto.csi.DeleteSnapshotRequest;
import io.csi4j.proto.csi.DeleteSnapshotResponse;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeResponse;
import io.csi4j.proto.csi.GetCapacityRequest;
import io.csi4j.proto.csi.GetCapacityResponse;
import io.csi4j.proto.csi.GetSnapshotRequest;
import io.csi4j.proto.csi.GetSnapshotResponse;
import io.csi4j.proto.csi.ListSnapshotsRequest;
import io.csi4j.proto.csi.ListSnapshotsResponse;
import io.csi4j.proto.csi.ListVolumesRequest;
import io.csi4j.proto.csi.ListVolumesResponse;
import io.csi4j.proto.csi.Snapshot;
import io.csi4j.proto.csi.ValidateVolumeCapabilitiesRequest;
import io.csi4j.proto.csi.ValidateVolumeCapabilitiesResponse;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.proto.csi.VolumeContentSource;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** A correct (unless flawed on purpose) in-memory Controller service. */
final class ReferenceController extends ControllerGrpc.ControllerImplBase {
    static final long DEFAULT_SIZE = 1 << 20;
    static final long POOL_SIZE = 1L << 40;
    static final String MUTABLE_PREFIX = "reference.csi4j.io/";

    private final Store store;

    ReferenceController(Store store) {
        this.store = store;
    }

    static void checkCapability(VolumeCapability c, String field) {
        require(c.hasAccessMode(), field + ".access_mode");
        if (c.getAccessMode().getMode() == VolumeCapability.AccessMode.Mode.UNKNOWN
                || c.getAccessMode().getMode() == VolumeCapability.AccessMode.Mode.UNRECOGNIZED) {
            throw Rpc.invalid(field + ".access_mode.mode is unknown");
        }
        require(c.getAccessTypeCase() != VolumeCapability.AccessTypeCase.ACCESSTYPE_NOT_SET, field + ".access_type");
    }

    static Volume volume(Store.VolumeRecord v) {
        Volume.Builder b = Volume.newBuilder().setVolumeId(v.id).setCapacityBytes(v.capacity).putAllVolumeContext(v.context)
                .addAllAccessibleTopology(v.topology);
        if (v.source != null) b.setContentSource(v.source);
        return b.build();
    }

    static Snapshot snapshot(Store.SnapshotRecord s) {
        return Snapshot.newBuilder().setSnapshotId(s.id).setSourceVolumeId(s.sourceVolumeId).setCreationTime(s.created)
                .setSizeBytes(s.size).setReadyToUse(true).setGroupSnapshotId(s.groupSnapshotId).build();
    }

    Store.VolumeRecord byName(String name) {
        return store.volumes.values().stream().filter(v -> v.name.equals(name)).findFirst().orElse(null);
    }

    @Override
    public void controllerGetCapabilities(ControllerGetCapabilitiesRequest request, StreamObserver<ControllerGetCapabilitiesResponse> o) {
        Options opt = store.options;
        List<ControllerServiceCapability.RPC.Type> types = new ArrayList<>(List.of(ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME));
        if (opt.controllerPublish()) types.addAll(List.of(ControllerServiceCapability.RPC.Type.PUBLISH_UNPUBLISH_VOLUME, ControllerServiceCapability.RPC.Type.PUBLISH_READONLY));
        if (opt.listing()) types.addAll(List.of(ControllerServiceCapability.RPC.Type.LIST_VOLUMES, ControllerServiceCapability.RPC.Type.GET_CAPACITY));
        if (opt.listing() && opt.controllerPublish()) types.add(ControllerServiceCapability.RPC.Type.LIST_VOLUMES_PUBLISHED_NODES);
        if (opt.snapshots()) types.add(ControllerServiceCapability.RPC.Type.CREATE_DELETE_SNAPSHOT);
        if (opt.snapshots() && opt.listing()) types.add(ControllerServiceCapability.RPC.Type.LIST_SNAPSHOTS);
        if (opt.snapshots() && opt.getters()) types.add(ControllerServiceCapability.RPC.Type.GET_SNAPSHOT);
        if (opt.cloning()) types.add(ControllerServiceCapability.RPC.Type.CLONE_VOLUME);
        if (opt.expand()) types.add(ControllerServiceCapability.RPC.Type.EXPAND_VOLUME);
        if (opt.getters()) types.add(ControllerServiceCapability.RPC.Type.GET_VOLUME);
        if (opt.modify()) types.add(ControllerServiceCapability.RPC.Type.MODIFY_VOLUME);
        var b = ControllerGetCapabilitiesResponse.newBuilder();
        for (var t : types) b.addCapabilities(ControllerServiceCapability.newBuilder().setRpc(ControllerServiceCapability.RPC.newBuilder().setType(t)));
        Rpc.answer(o, b::build);
    }

    @Override
    public void createVolume(CreateVolumeRequest r, StreamObserver<CreateVolumeResponse> o) {
        Rpc.answer(o, () -> CreateVolumeResponse.newBuilder().setVolume(create(r)).build());
    }

    private Volume create(CreateVolumeRequest r) {
        String name = r.getName();
        try {
            if (!(name.isEmpty() && store.flawed(Flaw.ACCEPTS_MISSING_NAME))) Rpc.checkName(name, "name");
        } catch (io.grpc.StatusRuntimeException e) {
            if (!store.flawed(Flaw.LEAKS_SECRET_IN_ERROR)) throw e;
            throw Rpc.invalid(e.getStatus().getDescription() + " (request secrets " + r.getSecretsMap() + ")");
        }
        Rpc.checkMap(r.getParametersMap(), "parameters", false);
        Rpc.checkMap(r.getSecretsMap(), "secrets", true);
        if (r.hasAccessibilityRequirements()) {
            var requirement = r.getAccessibilityRequirements();
            require(requirement.getRequisiteCount() + requirement.getPreferredCount() > 0, "accessibility_requirements.requisite or preferred");
            if (!store.options.topology()) throw Rpc.invalid("accessibility_requirements without VOLUME_ACCESSIBILITY_CONSTRAINTS");
            if (requirement.getRequisiteCount() > 0 && !requirement.getRequisiteList().contains(store.nodeTopology())) {
                throw Rpc.resourceExhausted("volumes are accessible from " + store.nodeTopology().getSegmentsMap() + " only");
            }
        }
        if (name.isEmpty()) name = store.nextId("unnamed");
        require(r.getVolumeCapabilitiesCount() > 0, "volume_capabilities");
        for (VolumeCapability c : r.getVolumeCapabilitiesList()) checkCapability(c, "volume_capabilities");
        boolean block = r.getVolumeCapabilities(0).hasBlock();
        if (r.getVolumeCapabilitiesList().stream().anyMatch(c -> c.hasBlock() != block)) throw Rpc.invalid("block and mount capabilities together");
        CapacityRange range = r.getCapacityRange();
        if (range.getRequiredBytes() < 0 || range.getLimitBytes() < 0) throw Rpc.invalid("capacity_range must not be negative");
        if (range.getLimitBytes() > 0 && range.getLimitBytes() < range.getRequiredBytes()) throw Rpc.outOfRange("limit_bytes below required_bytes");
        long capacity = range.getRequiredBytes() > 0 ? range.getRequiredBytes() : range.getLimitBytes() > 0 ? range.getLimitBytes() : DEFAULT_SIZE;

        Store.VolumeRecord created;
        synchronized (store) {
            Store.VolumeRecord existing = byName(name);
            long sourceSize = sourceSize(r, block);
            if (range.getLimitBytes() > 0 && sourceSize > range.getLimitBytes()) throw Rpc.outOfRange("the source is larger than limit_bytes");
            capacity = Math.max(capacity, sourceSize);
            if (existing != null) {
                boolean compatible = (range.getRequiredBytes() == 0 || existing.capacity >= range.getRequiredBytes())
                        && (range.getLimitBytes() == 0 || existing.capacity <= range.getLimitBytes())
                        && existing.block == block && sameSource(existing, r) && existing.parameters.equals(r.getParametersMap());
                if (compatible || store.flawed(Flaw.CREATE_SIZE_CONFLICT_OK)) return volume(existing);
                throw Rpc.alreadyExists("volume " + name + " exists with other arguments");
            }
            if (!store.flawed(Flaw.RACY_CREATE)) {
                created = materialize(r, name, block, capacity);
                store.volumes.put(created.id, created);
                return volume(created);
            }
        }
        sleep(20); // RACY_CREATE: the name was checked, the insert comes later without checking again
        created = materialize(r, name, block, capacity);
        synchronized (store) {
            store.volumes.put(created.id, created);
        }
        return volume(created);
    }

    private long sourceSize(CreateVolumeRequest r, boolean block) {
        if (!r.hasVolumeContentSource()) return 0;
        VolumeContentSource s = r.getVolumeContentSource();
        switch (s.getTypeCase()) {
            case SNAPSHOT -> {
                require(!s.getSnapshot().getSnapshotId().isEmpty(), "volume_content_source.snapshot.snapshot_id");
                if (!store.options.snapshots()) throw Rpc.invalid("snapshots are not supported");
                Store.SnapshotRecord snap = store.snapshots.get(s.getSnapshot().getSnapshotId());
                if (snap == null) throw Rpc.notFound("snapshot " + s.getSnapshot().getSnapshotId());
                if (snap.block != block) throw Rpc.invalid("the snapshot has another access type");
                return snap.size;
            }
            case VOLUME -> {
                require(!s.getVolume().getVolumeId().isEmpty(), "volume_content_source.volume.volume_id");
                if (!store.options.cloning()) throw Rpc.invalid("cloning is not supported");
                Store.VolumeRecord source = store.volumes.get(s.getVolume().getVolumeId());
                if (source == null) throw Rpc.notFound("volume " + s.getVolume().getVolumeId());
                if (source.block != block) throw Rpc.invalid("the source volume has another access type");
                return source.capacity;
            }
            default -> throw Rpc.invalid("volume_content_source without a type");
        }
    }

    private static boolean sameSource(Store.VolumeRecord existing, CreateVolumeRequest r) {
        VolumeContentSource wanted = r.hasVolumeContentSource() ? r.getVolumeContentSource() : null;
        return java.util.Objects.equals(existing.source, wanted);
    }

    private Store.VolumeRecord materialize(CreateVolumeRequest r, String name, boolean block, long capacity) {
        String id = store.nextId("vol");
        Path data = store.pool.resolve(id + (block ? ".img" : ""));
        VolumeContentSource source = r.hasVolumeContentSource() ? r.getVolumeContentSource() : null;
        if (source == null) {
            Data.createEmpty(data, block, capacity);
        } else if (source.hasSnapshot()) {
            Store.SnapshotRecord snap = store.snapshots.get(source.getSnapshot().getSnapshotId());
            Path from = snap.data != null ? snap.data : store.volumes.get(snap.sourceVolumeId).live(); // LAZY_SNAPSHOT reads the source now
            Data.copy(from, data);
            if (block) Data.grow(data, capacity);
        } else {
            Data.copy(store.volumes.get(source.getVolume().getVolumeId()).live(), data);
            if (block) Data.grow(data, capacity);
        }
        Store.VolumeRecord v = new Store.VolumeRecord(id, name, block, capacity, r.getParametersMap(), source, data);
        if (store.options.topology()) v.topology.add(store.nodeTopology());
        return v;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void deleteVolume(DeleteVolumeRequest r, StreamObserver<DeleteVolumeResponse> o) {
        Rpc.answer(o, () -> {
            require(!r.getVolumeId().isEmpty(), "volume_id");
            synchronized (store) {
                Store.VolumeRecord v = store.volumes.get(r.getVolumeId());
                if (v == null) {
                    if (store.flawed(Flaw.DELETE_MISSING_VOLUME_NOT_FOUND)) throw Rpc.notFound("volume " + r.getVolumeId());
                    return DeleteVolumeResponse.getDefaultInstance();
                }
                if (v.group != null) throw Rpc.failedPrecondition("volume " + v.id + " is in volume group " + v.group);
                if (v.inUse()) throw Rpc.failedPrecondition("volume " + v.id + " is in use");
                store.volumes.remove(v.id);
                Data.delete(v.data);
            }
            return DeleteVolumeResponse.getDefaultInstance();
        });
    }

    @Override
    public void controllerPublishVolume(ControllerPublishVolumeRequest r, StreamObserver<ControllerPublishVolumeResponse> o) {
        Rpc.answer(o, () -> {
            require(!r.getVolumeId().isEmpty(), "volume_id");
            require(!r.getNodeId().isEmpty(), "node_id");
            require(r.hasVolumeCapability(), "volume_capability");
            checkCapability(r.getVolumeCapability(), "volume_capability");
            Map<String, String> context = Map.of("reference.csi4j.io/node", Store.NODE_ID);
            synchronized (store) {
                Store.VolumeRecord v = store.volumes.get(r.getVolumeId());
                if (v == null) {
                    if (store.flawed(Flaw.PUBLISH_MISSING_VOLUME_OK)) return ControllerPublishVolumeResponse.getDefaultInstance();
                    throw Rpc.notFound("volume " + r.getVolumeId());
                }
                if (!r.getNodeId().equals(Store.NODE_ID)) throw Rpc.notFound("node " + r.getNodeId());
                if (r.getVolumeCapability().hasBlock() != v.block) throw Rpc.invalid("the volume has another access type");
                if (v.controllerNode != null) {
                    if (v.controllerReadonly != r.getReadonly() || !v.controllerCapability.equals(r.getVolumeCapability())) {
                        throw Rpc.alreadyExists("volume " + v.id + " is published to " + v.controllerNode + " with other arguments");
                    }
                } else {
                    long attached = store.volumes.values().stream().filter(x -> x.controllerNode != null).count();
                    int max = store.options.maxVolumesPerNode();
                    if (max > 0 && attached >= max) throw Rpc.resourceExhausted("node " + Store.NODE_ID + " has the maximum of " + max + " volumes");
                    v.controllerNode = r.getNodeId();
                    v.controllerReadonly = r.getReadonly();
                    v.controllerCapability = r.getVolumeCapability();
                }
            }
            return ControllerPublishVolumeResponse.newBuilder().putAllPublishContext(context).build();
        });
    }

    @Override
    public void controllerUnpublishVolume(ControllerUnpublishVolumeRequest r, StreamObserver<ControllerUnpublishVolumeResponse> o) {
        Rpc.answer(o, () -> {
            require(!r.getVolumeId().isEmpty(), "volume_id");
            synchronized (store) {
                Store.VolumeRecord v = store.volumes.get(r.getVolumeId());
                boolean all = r.getNodeId().isEmpty() && !store.flawed(Flaw.UNPUBLISH_WITHOUT_NODE_IGNORED);
                if (v != null && (all || r.getNodeId().equals(v.controllerNode))) {
                    v.controllerNode = null;
                    v.controllerCapability = null;
                    v.controllerReadonly = false;
                }
            }
            return ControllerUnpublishVolumeResponse.getDefaultInstance();
        });
    }

    @Override
    public void validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest r, StreamObserver<ValidateVolumeCapabilitiesResponse> o) {
        Rpc.answer(o, () -> {
            require(!r.getVolumeId().isEmpty(), "volume_id");
            require(r.getVolumeCapabilitiesCount() > 0, "volume_capabilities");
            for (VolumeCapability c : r.getVolumeCapabilitiesList()) checkCapability(c, "volume_capabilities");
            synchronized (store) {
                Store.VolumeRecord v = store.volumes.get(r.getVolumeId());
                if (v == null) throw Rpc.notFound("volume " + r.getVolumeId());
                if (r.getVolumeCapabilitiesList().stream().anyMatch(c -> c.hasBlock() != v.block)) {
                    return ValidateVolumeCapabilitiesResponse.newBuilder().setMessage("the volume has another access type").build();
                }
                return ValidateVolumeCapabilitiesResponse.newBuilder().setConfirmed(ValidateVolumeCapabilitiesResponse.Confirmed.newBuilder()
                        .addAllVolumeCapabilities(r.getVolumeCapabilitiesList()).putAllVolumeContext(r.getVolumeContextMap())
                        .putAllParameters(r.getParametersMap())).build();
            }
        });
    }

    private static List<String> publishedNodes(Store.VolumeRecord v) {
        return v.controllerNode == null ? List.of() : List.of(v.controllerNode);
    }

    @Override
    public void listVolumes(ListVolumesRequest r, StreamObserver<ListVolumesResponse> o) {
        Rpc.answer(o, () -> {
            synchronized (store) {
                var page = store.page(store.volumes, r.getMaxEntries(), r.getStartingToken(), v -> ListVolumesResponse.Entry.newBuilder()
                        .setVolume(volume(v))
                        .setStatus(ListVolumesResponse.VolumeStatus.newBuilder().addAllPublishedNodeIds(publishedNodes(v))).build());
                return ListVolumesResponse.newBuilder().addAllEntries(page.entries()).setNextToken(page.nextToken()).build();
            }
        });
    }

    @Override
    public void controllerGetVolume(ControllerGetVolumeRequest r, StreamObserver<ControllerGetVolumeResponse> o) {
        Rpc.answer(o, () -> {
            require(!r.getVolumeId().isEmpty(), "volume_id");
            synchronized (store) {
                Store.VolumeRecord v = store.volumes.get(r.getVolumeId());
                if (v == null && store.flawed(Flaw.ERROR_WITH_DETAILS)) {
                    io.grpc.Metadata trailers = new io.grpc.Metadata();
                    trailers.put(io.grpc.Metadata.Key.of("grpc-status-details-bin", io.grpc.Metadata.BINARY_BYTE_MARSHALLER), new byte[] {8, 5});
                    throw io.grpc.Status.NOT_FOUND.withDescription("volume " + r.getVolumeId()).asRuntimeException(trailers);
                }
                if (v == null) throw Rpc.notFound("volume " + r.getVolumeId());
                return ControllerGetVolumeResponse.newBuilder().setVolume(volume(v))
                        .setStatus(ControllerGetVolumeResponse.VolumeStatus.newBuilder().addAllPublishedNodeIds(publishedNodes(v))).build();
            }
        });
    }

    @Override
    public void getCapacity(GetCapacityRequest r, StreamObserver<GetCapacityResponse> o) {
        Rpc.answer(o, () -> {
            synchronized (store) {
                long used = store.volumes.values().stream().mapToLong(v -> v.capacity).sum();
                return GetCapacityResponse.newBuilder().setAvailableCapacity(Math.max(0, POOL_SIZE - used)).build();
            }
        });
    }

    @Override
    public void controllerExpandVolume(ControllerExpandVolumeRequest r, StreamObserver<ControllerExpandVolumeResponse> o) {
        Rpc.answer(o, () -> {
            require(!r.getVolumeId().isEmpty(), "volume_id");
            require(r.hasCapacityRange(), "capacity_range");
            CapacityRange range = r.getCapacityRange();
            if (range.getRequiredBytes() < 0 || range.getLimitBytes() < 0) throw Rpc.invalid("capacity_range must not be negative");
            synchronized (store) {
                Store.VolumeRecord v = store.volumes.get(r.getVolumeId());
                if (v == null) throw Rpc.notFound("volume " + r.getVolumeId());
                if (r.hasVolumeCapability() && r.getVolumeCapability().hasBlock() != v.block) throw Rpc.invalid("the volume has another access type");
                if (range.getLimitBytes() > 0 && range.getLimitBytes() < v.capacity) throw Rpc.outOfRange("volumes do not shrink");
                v.capacity = Math.max(v.capacity, range.getRequiredBytes());
                if (v.block) Data.grow(v.data, v.capacity);
                return ControllerExpandVolumeResponse.newBuilder().setCapacityBytes(v.capacity).setNodeExpansionRequired(true).build();
            }
        });
    }

    @Override
    public void controllerModifyVolume(ControllerModifyVolumeRequest r, StreamObserver<ControllerModifyVolumeResponse> o) {
        Rpc.answer(o, () -> {
            require(!r.getVolumeId().isEmpty(), "volume_id");
            // REQUIRED, but an empty map cannot be told from an absent one: it asks for no change
            if (store.flawed(Flaw.REFUSES_EMPTY_REQUIRED_LISTS)) require(r.getMutableParametersCount() > 0, "mutable_parameters");
            for (String key : r.getMutableParametersMap().keySet()) {
                if (!key.startsWith(MUTABLE_PREFIX)) throw Rpc.invalid("unknown mutable parameter " + key);
            }
            synchronized (store) {
                Store.VolumeRecord v = store.volumes.get(r.getVolumeId());
                if (v == null) throw Rpc.notFound("volume " + r.getVolumeId());
                v.mutable.putAll(r.getMutableParametersMap());
            }
            return ControllerModifyVolumeResponse.getDefaultInstance();
        });
    }

    @Override
    public void createSnapshot(CreateSnapshotRequest r, StreamObserver<CreateSnapshotResponse> o) {
        Rpc.answer(o, () -> {
            require(!r.getSourceVolumeId().isEmpty(), "source_volume_id");
            Rpc.checkName(r.getName(), "name");
            synchronized (store) {
                Store.VolumeRecord v = store.volumes.get(r.getSourceVolumeId());
                if (v == null) throw Rpc.notFound("volume " + r.getSourceVolumeId());
                Store.SnapshotRecord existing = store.snapshots.values().stream().filter(s -> s.name.equals(r.getName())).findFirst().orElse(null);
                if (existing != null) {
                    if (!existing.sourceVolumeId.equals(r.getSourceVolumeId())) throw Rpc.alreadyExists("snapshot " + r.getName() + " is of another volume");
                    return CreateSnapshotResponse.newBuilder().setSnapshot(snapshot(existing)).build();
                }
                Store.SnapshotRecord s = cut(v, r.getName());
                return CreateSnapshotResponse.newBuilder().setSnapshot(snapshot(s)).build();
            }
        });
    }

    /** Copies the volume's current bytes (LAZY_SNAPSHOT: copies nothing until restored). Caller holds the store. */
    Store.SnapshotRecord cut(Store.VolumeRecord v, String name) {
        String id = store.nextId("snap");
        Path data = null;
        if (!store.flawed(Flaw.LAZY_SNAPSHOT)) {
            data = store.pool.resolve(id + (v.block ? ".img" : ""));
            Data.copy(v.live(), data);
        }
        Store.SnapshotRecord s = new Store.SnapshotRecord(id, name, v.id, v.capacity, v.block, data);
        store.snapshots.put(id, s);
        return s;
    }

    @Override
    public void deleteSnapshot(DeleteSnapshotRequest r, StreamObserver<DeleteSnapshotResponse> o) {
        Rpc.answer(o, () -> {
            require(!r.getSnapshotId().isEmpty(), "snapshot_id");
            synchronized (store) {
                Store.SnapshotRecord s = store.snapshots.get(r.getSnapshotId());
                if (s == null) return DeleteSnapshotResponse.getDefaultInstance();
                if (!s.groupSnapshotId.isEmpty()) throw Rpc.invalid("snapshot " + s.id + " is part of group snapshot " + s.groupSnapshotId);
                store.snapshots.remove(s.id);
                if (s.data != null) Data.delete(s.data);
            }
            return DeleteSnapshotResponse.getDefaultInstance();
        });
    }

    @Override
    public void listSnapshots(ListSnapshotsRequest r, StreamObserver<ListSnapshotsResponse> o) {
        if (store.flawed(Flaw.EXITS_ON_NEGATIVE_MAX_ENTRIES) && r.getMaxEntries() < 0) {
            store.exit.run(); // like a Go driver's panic: no answer, the server is gone
            return;
        }
        Rpc.answer(o, () -> {
            synchronized (store) {
                TreeMap<String, Store.SnapshotRecord> selected = new TreeMap<>();
                for (Store.SnapshotRecord s : store.snapshots.values()) {
                    if (!r.getSnapshotId().isEmpty() && !s.id.equals(r.getSnapshotId())) continue;
                    if (!r.getSourceVolumeId().isEmpty() && !s.sourceVolumeId.equals(r.getSourceVolumeId())) continue;
                    selected.put(s.id, s);
                }
                var page = store.page(selected, r.getMaxEntries(), r.getStartingToken(),
                        s -> ListSnapshotsResponse.Entry.newBuilder().setSnapshot(snapshot(s)).build());
                return ListSnapshotsResponse.newBuilder().addAllEntries(page.entries()).setNextToken(page.nextToken()).build();
            }
        });
    }

    @Override
    public void getSnapshot(GetSnapshotRequest r, StreamObserver<GetSnapshotResponse> o) {
        Rpc.answer(o, () -> {
            require(!r.getSnapshotId().isEmpty(), "snapshot_id");
            synchronized (store) {
                Store.SnapshotRecord s = store.snapshots.get(r.getSnapshotId());
                if (s == null) {
                    if (store.flawed(Flaw.GET_MISSING_SNAPSHOT_OK)) return GetSnapshotResponse.getDefaultInstance();
                    if (store.flawed(Flaw.ERROR_WITHOUT_MESSAGE)) throw io.grpc.Status.NOT_FOUND.asRuntimeException();
                    throw Rpc.notFound("snapshot " + r.getSnapshotId());
                }
                return GetSnapshotResponse.newBuilder().setSnapshot(snapshot(s)).build();
            }
        });
    }
}
