package io.csi4j.driver.cluster;

import static io.csi4j.driver.cluster.ControllerRouter.reply;

import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.catalog.State;
import io.csi4j.driver.csi.GroupControllerService;
import io.csi4j.driver.engine.FreezeHold;
import io.csi4j.driver.engine.StorageEngine;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ObjectId.Kind;
import io.csi4j.driver.snapshot.GroupSnapshots;
import io.csi4j.driver.volume.Volumes;
import io.csi4j.proto.cluster.*;
import io.csi4j.sdk.CsiException;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;

/**
 * The agent's side of csi4j.cluster.v1.NodeAgent: what the controller needs that CSI has no call for (a volume
 * or group snapshot by name; the freeze / cut / thaw steps of a group snapshot that spans nodes).
 */
public final class NodeAgentService extends NodeAgentGrpc.NodeAgentImplBase {
    /** A controller asking for longer is capped here: a workload stays frozen at most this long. */
    static final Duration LONGEST_HOLD = Duration.ofSeconds(60);

    private final Catalog catalog;
    private final StorageEngine engine;
    private final Volumes volumes;
    private final GroupSnapshots groupSnapshots;
    private final FreezeHolds holds = new FreezeHolds();

    public NodeAgentService(Catalog catalog, StorageEngine engine, Volumes volumes, GroupSnapshots groupSnapshots) {
        this.catalog = catalog;
        this.engine = engine;
        this.volumes = volumes;
        this.groupSnapshots = groupSnapshots;
    }

    @Override
    public void findVolume(FindVolumeRequest req, StreamObserver<FindVolumeResponse> out) {
        // any row counts, also one a crash left half made: CreateVolume on this node finishes or answers it
        String id = req.getName().isEmpty() ? "" : catalog.volumes().byName(req.getName()).map(v -> v.id()).orElse("");
        reply(out, FindVolumeResponse.newBuilder().setVolumeId(id).build());
    }

    @Override
    public void freezeVolumes(FreezeVolumesRequest req, StreamObserver<FreezeVolumesResponse> out) {
        if (req.getHoldId().isEmpty()) throw CsiException.invalidArgument("hold_id is REQUIRED");
        List<String> ids = localVolumes(req.getVolumeIdsList());
        if (req.getHoldMillis() <= 0) throw CsiException.invalidArgument("hold_millis must be positive");
        Duration hold = Duration.ofMillis(Math.min(req.getHoldMillis(), LONGEST_HOLD.toMillis()));
        holds.add(req.getHoldId(), engine.holdFrozen(ids), hold);
        reply(out, FreezeVolumesResponse.getDefaultInstance());
    }

    @Override
    public void cutGroupSnapshot(CutGroupSnapshotRequest req, StreamObserver<CutGroupSnapshotResponse> out) {
        ObjectId id = ObjectId.parse(Kind.GROUP_SNAPSHOT, req.getGroupSnapshotId()).filter(ObjectId::clusterWide)
                .orElseThrow(() -> CsiException.invalidArgument("group_snapshot_id '" + req.getGroupSnapshotId() + "' is not a cluster-wide id"));
        if (req.getName().isEmpty()) throw CsiException.invalidArgument("name is REQUIRED");
        FreezeHold held = holds.get(req.getHoldId()).orElseThrow(() -> CsiException.aborted("freeze hold '" + req.getHoldId()
                + "' is not held on this node (it lapsed or was thawed); the group snapshot must start again"));
        var part = groupSnapshots.createPart(req.getName(), id, req.getVolumeIdsList(), held);  // it checks the volumes
        reply(out, CutGroupSnapshotResponse.newBuilder().setPart(GroupControllerService.wire(part)).build());
    }

    @Override
    public void thawVolumes(ThawVolumesRequest req, StreamObserver<ThawVolumesResponse> out) {
        holds.release(req.getHoldId());
        reply(out, ThawVolumesResponse.getDefaultInstance());
    }

    @Override
    public void findGroupSnapshot(FindGroupSnapshotRequest req, StreamObserver<FindGroupSnapshotResponse> out) {
        var b = FindGroupSnapshotResponse.newBuilder();
        if (!req.getName().isEmpty()) {
            catalog.groupSnapshots().byName(req.getName()).ifPresent(g -> b.setGroupSnapshotId(g.id())
                    .addAllSourceVolumeIds(g.sourceVolumeIds()).setReady(g.state() == State.READY));
        }
        reply(out, b.build());
    }

    /** Ids of volumes of this node that exist and are ready; NOT_FOUND / FAILED_PRECONDITION otherwise. */
    private List<String> localVolumes(List<String> ids) {
        if (ids.isEmpty()) throw CsiException.invalidArgument("volume_ids is REQUIRED");
        if (new HashSet<>(ids).size() != ids.size()) throw CsiException.invalidArgument("volume_ids has duplicates");
        for (String id : ids) volumes.readyVolume(id, "source volume");
        return ids;
    }
}
