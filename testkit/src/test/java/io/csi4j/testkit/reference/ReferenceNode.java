package io.csi4j.testkit.reference;

import static io.csi4j.testkit.reference.Rpc.require;

import io.csi4j.proto.csi.NodeExpandVolumeRequest;
import io.csi4j.proto.csi.NodeExpandVolumeResponse;
import io.csi4j.proto.csi.NodeGetCapabilitiesRequest;
import io.csi4j.proto.csi.NodeGetCapabilitiesResponse;
import io.csi4j.proto.csi.NodeGetInfoRequest;
import io.csi4j.proto.csi.NodeGetInfoResponse;
import io.csi4j.proto.csi.NodeGetVolumeStatsRequest;
import io.csi4j.proto.csi.NodeGetVolumeStatsResponse;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodePublishVolumeResponse;
import io.csi4j.proto.csi.NodeServiceCapability;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeResponse;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeResponse;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeResponse;
import io.csi4j.proto.csi.VolumeUsage;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A Node service without mounts: publishing copies the volume's bytes to target_path (a directory,
 * or a file standing in for the block device) and unpublishing copies them back.
 */
final class ReferenceNode extends NodeGrpc.NodeImplBase {
    private final Store store;

    ReferenceNode(Store store) {
        this.store = store;
    }

    @Override
    public void nodeGetCapabilities(NodeGetCapabilitiesRequest request, StreamObserver<NodeGetCapabilitiesResponse> o) {
        List<NodeServiceCapability.RPC.Type> types = new ArrayList<>();
        if (store.options.stage()) types.add(NodeServiceCapability.RPC.Type.STAGE_UNSTAGE_VOLUME);
        if (store.options.stats()) types.add(NodeServiceCapability.RPC.Type.GET_VOLUME_STATS);
        if (store.options.expand()) types.add(NodeServiceCapability.RPC.Type.EXPAND_VOLUME);
        var b = NodeGetCapabilitiesResponse.newBuilder();
        for (var t : types) b.addCapabilities(NodeServiceCapability.newBuilder().setRpc(NodeServiceCapability.RPC.newBuilder().setType(t)));
        Rpc.answer(o, b::build);
    }

    @Override
    public void nodeGetInfo(NodeGetInfoRequest request, StreamObserver<NodeGetInfoResponse> o) {
        Rpc.answer(o, () -> {
            var b = NodeGetInfoResponse.newBuilder().setNodeId(Store.NODE_ID).setMaxVolumesPerNode(store.options.maxVolumesPerNode());
            if (store.options.topology()) b.setAccessibleTopology(store.nodeTopology());
            return b.build();
        });
    }

    /** Paths override the 128-byte string limit (unless flawed). */
    private void checkPath(String path, String field) {
        if (store.flawed(Flaw.SHORT_PATHS_ONLY) && path.length() > 128) throw Rpc.invalid(field + " is longer than 128 bytes");
    }

    @Override
    public void nodeStageVolume(NodeStageVolumeRequest r, StreamObserver<NodeStageVolumeResponse> o) {
        Rpc.answer(o, () -> {
            if (!store.options.stage()) throw Rpc.unimplemented();
            require(!r.getVolumeId().isEmpty(), "volume_id");
            require(!r.getStagingTargetPath().isEmpty(), "staging_target_path");
            require(r.hasVolumeCapability(), "volume_capability");
            ReferenceController.checkCapability(r.getVolumeCapability(), "volume_capability");
            checkPath(r.getStagingTargetPath(), "staging_target_path");
            Path staging = Path.of(r.getStagingTargetPath());
            synchronized (store) {
                Store.VolumeRecord v = store.volumes.get(r.getVolumeId());
                if (v == null) {
                    if (store.flawed(Flaw.STAGE_MISSING_VOLUME_OK)) return NodeStageVolumeResponse.getDefaultInstance();
                    throw Rpc.notFound("volume " + r.getVolumeId());
                }
                if (store.options.controllerPublish() && v.controllerNode == null) throw Rpc.failedPrecondition("volume " + v.id + " is not controller-published");
                if (!Files.isDirectory(staging)) throw Rpc.invalid("staging_target_path " + staging + " is not a directory");
                if (r.getVolumeCapability().hasBlock() != v.block) throw Rpc.failedPrecondition("the volume has another access type");
                if (v.stagedAt != null) {
                    if (!v.stagedAt.equals(staging)) throw Rpc.failedPrecondition("volume " + v.id + " is staged at " + v.stagedAt);
                    if (!v.stagedCapability.equals(r.getVolumeCapability())) throw Rpc.alreadyExists("volume " + v.id + " is staged with another capability");
                    return NodeStageVolumeResponse.getDefaultInstance();
                }
                v.stagedAt = staging;
                v.stagedCapability = r.getVolumeCapability();
            }
            return NodeStageVolumeResponse.getDefaultInstance();
        });
    }

    @Override
    public void nodeUnstageVolume(NodeUnstageVolumeRequest r, StreamObserver<NodeUnstageVolumeResponse> o) {
        Rpc.answer(o, () -> {
            if (!store.options.stage()) throw Rpc.unimplemented();
            require(!r.getVolumeId().isEmpty(), "volume_id");
            require(!r.getStagingTargetPath().isEmpty(), "staging_target_path");
            checkPath(r.getStagingTargetPath(), "staging_target_path");
            synchronized (store) {
                Store.VolumeRecord v = store.volumes.get(r.getVolumeId());
                if (v == null) throw Rpc.notFound("volume " + r.getVolumeId());
                if (Path.of(r.getStagingTargetPath()).equals(v.stagedAt)) {
                    if (!v.published.isEmpty()) throw Rpc.failedPrecondition("volume " + v.id + " is still published");
                    v.stagedAt = null;
                    v.stagedCapability = null;
                }
            }
            return NodeUnstageVolumeResponse.getDefaultInstance();
        });
    }

    @Override
    public void nodePublishVolume(NodePublishVolumeRequest r, StreamObserver<NodePublishVolumeResponse> o) {
        Rpc.answer(o, () -> {
            require(!r.getVolumeId().isEmpty(), "volume_id");
            require(!r.getTargetPath().isEmpty(), "target_path");
            require(r.hasVolumeCapability(), "volume_capability");
            ReferenceController.checkCapability(r.getVolumeCapability(), "volume_capability");
            checkPath(r.getTargetPath(), "target_path");
            checkPath(r.getStagingTargetPath(), "staging_target_path");
            Path target = Path.of(r.getTargetPath());
            synchronized (store) {
                Store.VolumeRecord v = store.volumes.get(r.getVolumeId());
                if (v == null) throw Rpc.notFound("volume " + r.getVolumeId());
                if (store.options.stage()) {
                    if (r.getStagingTargetPath().isEmpty()) throw Rpc.failedPrecondition("staging_target_path is not set");
                    if (!Path.of(r.getStagingTargetPath()).equals(v.stagedAt)) throw Rpc.failedPrecondition("volume " + v.id + " is not staged there");
                } else if (store.options.controllerPublish() && v.controllerNode == null) {
                    throw Rpc.failedPrecondition("volume " + v.id + " is not controller-published");
                }
                // a volume controller-published readonly is readonly on the node too, whatever this call asks
                boolean readonly = r.getReadonly() || (v.controllerReadonly && !store.flawed(Flaw.NODE_IGNORES_CONTROLLER_READONLY));
                Store.Publication existing = v.published.get(target);
                if (existing != null) {
                    if (existing.readonly() != readonly || !existing.capability().equals(r.getVolumeCapability())) {
                        throw Rpc.alreadyExists("volume " + v.id + " is published at " + target + " with other arguments");
                    }
                    return NodePublishVolumeResponse.getDefaultInstance();
                }
                if (!v.published.isEmpty()) throw Rpc.failedPrecondition("volume " + v.id + " is published elsewhere");
                if (r.getVolumeCapability().hasBlock() != v.block) throw Rpc.failedPrecondition("the volume has another access type");
                if (!Files.isDirectory(target.getParent())) throw Rpc.invalid("the parent of target_path does not exist");
                Data.copy(v.data, target);
                boolean mounted = readonly && ReadOnly.apply(target);
                v.published.put(target, new Store.Publication(target, r.getVolumeCapability(), readonly, mounted));
            }
            return NodePublishVolumeResponse.getDefaultInstance();
        });
    }

    @Override
    public void nodeUnpublishVolume(NodeUnpublishVolumeRequest r, StreamObserver<NodeUnpublishVolumeResponse> o) {
        Rpc.answer(o, () -> {
            require(!r.getVolumeId().isEmpty(), "volume_id");
            require(!r.getTargetPath().isEmpty(), "target_path");
            checkPath(r.getTargetPath(), "target_path");
            Path target = Path.of(r.getTargetPath());
            synchronized (store) {
                Store.VolumeRecord v = store.volumes.get(r.getVolumeId());
                if (v == null) throw Rpc.notFound("volume " + r.getVolumeId());
                Store.Publication p = v.published.remove(target);
                if (p == null) return NodeUnpublishVolumeResponse.getDefaultInstance();
                unpublish(v, p, store.flawed(Flaw.LEAVES_TARGET_PATH));
            }
            return NodeUnpublishVolumeResponse.getDefaultInstance();
        });
    }

    /** Takes a publication down: read-only ones are discarded, writable ones copied back first. */
    static void unpublish(Store.VolumeRecord v, Store.Publication p, boolean leaveTarget) {
        if (p.readonly()) {
            ReadOnly.release(p.target(), p.mounted());
        } else {
            Data.copy(p.target(), v.data);
        }
        if (!leaveTarget) Data.delete(p.target());
    }

    private static boolean at(Store.VolumeRecord v, Path path) {
        return path.equals(v.stagedAt) || v.published.containsKey(path);
    }

    @Override
    public void nodeGetVolumeStats(NodeGetVolumeStatsRequest r, StreamObserver<NodeGetVolumeStatsResponse> o) {
        if (store.flawed(Flaw.HANGS_ON_STATS)) return; // never answers: the caller's deadline must end the call
        Rpc.answer(o, () -> {
            if (!store.options.stats()) throw Rpc.unimplemented();
            require(!r.getVolumeId().isEmpty(), "volume_id");
            require(!r.getVolumePath().isEmpty(), "volume_path");
            checkPath(r.getVolumePath(), "volume_path");
            checkPath(r.getStagingTargetPath(), "staging_target_path");
            synchronized (store) {
                Store.VolumeRecord v = store.volumes.get(r.getVolumeId());
                if (v == null) throw Rpc.notFound("volume " + r.getVolumeId());
                Path path = Path.of(r.getVolumePath());
                if (!at(v, path)) throw Rpc.notFound("volume " + v.id + " is not at " + path);
                Path live = v.live();
                VolumeUsage.Builder usage = VolumeUsage.newBuilder().setUnit(VolumeUsage.Unit.BYTES);
                if (v.block) {
                    usage.setTotal(Data.used(live));
                } else {
                    long used = Data.used(live);
                    usage.setTotal(v.nodeSize).setUsed(used).setAvailable(Math.max(0, v.nodeSize - used));
                }
                return NodeGetVolumeStatsResponse.newBuilder().addUsage(usage).build();
            }
        });
    }

    @Override
    public void nodeExpandVolume(NodeExpandVolumeRequest r, StreamObserver<NodeExpandVolumeResponse> o) {
        Rpc.answer(o, () -> {
            if (!store.options.expand()) throw Rpc.unimplemented();
            require(!r.getVolumeId().isEmpty(), "volume_id");
            require(!r.getVolumePath().isEmpty(), "volume_path");
            checkPath(r.getVolumePath(), "volume_path");
            checkPath(r.getStagingTargetPath(), "staging_target_path");
            synchronized (store) {
                Store.VolumeRecord v = store.volumes.get(r.getVolumeId());
                if (v == null) throw Rpc.notFound("volume " + r.getVolumeId());
                Path path = Path.of(r.getVolumePath());
                if (!at(v, path)) throw Rpc.notFound("volume " + v.id + " is not at " + path);
                if (r.hasVolumeCapability() && r.getVolumeCapability().hasBlock() != v.block && !store.flawed(Flaw.EXPAND_IGNORES_CAPABILITY)) {
                    throw Rpc.invalid("the volume has another access type");
                }
                long limit = r.getCapacityRange().getLimitBytes();
                if (limit > 0 && limit < v.capacity) throw Rpc.outOfRange("volumes do not shrink");
                if (r.getCapacityRange().getRequiredBytes() > v.capacity) throw Rpc.outOfRange("expand the volume on the controller first");
                if (v.block) {
                    for (Store.Publication p : v.published.values()) if (!p.readonly()) Data.grow(p.target(), v.capacity);
                } else {
                    v.nodeSize = v.capacity;
                }
                return NodeExpandVolumeResponse.newBuilder().setCapacityBytes(v.capacity).build();
            }
        });
    }
}
