package io.csi4j.driver.addons;

import static io.csi4j.driver.csi.WireMapping.reply;

import com.google.protobuf.Duration;
import com.google.protobuf.Timestamp;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.replication.VolumeReplication;
import io.csi4j.proto.addons.replication.ControllerGrpc;
import io.csi4j.proto.addons.replication.DemoteVolumeRequest;
import io.csi4j.proto.addons.replication.DemoteVolumeResponse;
import io.csi4j.proto.addons.replication.DisableVolumeReplicationRequest;
import io.csi4j.proto.addons.replication.DisableVolumeReplicationResponse;
import io.csi4j.proto.addons.replication.EnableVolumeReplicationRequest;
import io.csi4j.proto.addons.replication.EnableVolumeReplicationResponse;
import io.csi4j.proto.addons.replication.GetVolumeReplicationInfoRequest;
import io.csi4j.proto.addons.replication.GetVolumeReplicationInfoResponse;
import io.csi4j.proto.addons.replication.PromoteVolumeRequest;
import io.csi4j.proto.addons.replication.PromoteVolumeResponse;
import io.csi4j.proto.addons.replication.ReplicationSource;
import io.csi4j.proto.addons.replication.ResyncVolumeRequest;
import io.csi4j.proto.addons.replication.ResyncVolumeResponse;
import io.grpc.stub.StreamObserver;

/**
 * CSI-Addons replication.Controller: maps wire messages to {@link VolumeReplication} and back. Served by the cluster
 * controller only (a lone plugin has no replicated volume, does not list VOLUME_REPLICATION and answers
 * UNIMPLEMENTED); its failures get their codes from {@link AddonsStatus}.
 */
public final class VolumeReplicationService extends ControllerGrpc.ControllerImplBase {
    private final VolumeReplication replication;

    public VolumeReplicationService(VolumeReplication replication) {
        this.replication = replication;
    }

    @Override
    public void enableVolumeReplication(EnableVolumeReplicationRequest req, StreamObserver<EnableVolumeReplicationResponse> out) {
        replication.enable(volumeId(req.getVolumeId(), req.hasReplicationSource(), req.getReplicationSource()));
        reply(out, EnableVolumeReplicationResponse.getDefaultInstance());
    }

    @Override
    public void disableVolumeReplication(DisableVolumeReplicationRequest req, StreamObserver<DisableVolumeReplicationResponse> out) {
        replication.disable(volumeId(req.getVolumeId(), req.hasReplicationSource(), req.getReplicationSource()));
        reply(out, DisableVolumeReplicationResponse.getDefaultInstance());
    }

    @Override
    public void promoteVolume(PromoteVolumeRequest req, StreamObserver<PromoteVolumeResponse> out) {
        replication.promote(volumeId(req.getVolumeId(), req.hasReplicationSource(), req.getReplicationSource()), req.getForce());
        reply(out, PromoteVolumeResponse.getDefaultInstance());
    }

    @Override
    public void demoteVolume(DemoteVolumeRequest req, StreamObserver<DemoteVolumeResponse> out) {
        replication.demote(volumeId(req.getVolumeId(), req.hasReplicationSource(), req.getReplicationSource()), req.getForce());
        reply(out, DemoteVolumeResponse.getDefaultInstance());
    }

    @Override
    public void resyncVolume(ResyncVolumeRequest req, StreamObserver<ResyncVolumeResponse> out) {
        boolean ready = replication.resync(volumeId(req.getVolumeId(), req.hasReplicationSource(), req.getReplicationSource()), req.getForce());
        reply(out, ResyncVolumeResponse.newBuilder().setReady(ready).build());
    }

    @Override
    public void getVolumeReplicationInfo(GetVolumeReplicationInfoRequest req, StreamObserver<GetVolumeReplicationInfoResponse> out) {
        var round = replication.info(volumeId(req.getVolumeId(), req.hasReplicationSource(), req.getReplicationSource()));
        reply(out, GetVolumeReplicationInfoResponse.newBuilder()
                .setLastSyncTime(Timestamp.newBuilder().setSeconds(round.cutAt().getEpochSecond()).setNanos(round.cutAt().getNano()))
                .setLastSyncDuration(Duration.newBuilder().setSeconds(round.took().getSeconds()).setNanos(round.took().getNano()))
                .setLastSyncBytes(round.bytes()).build());
    }

    /**
     * The volume a request names: {@code replication_source.volume.volume_id}, or the deprecated {@code volume_id}; both
     * set must agree. A group or snapshot source is INVALID: csi4j replicates volumes (no group replication capability).
     */
    static String volumeId(String deprecated, boolean hasSource, ReplicationSource source) {
        String fromSource = "";
        if (hasSource) {
            switch (source.getTypeCase()) {
                case VOLUME -> fromSource = source.getVolume().getVolumeId();
                case VOLUMEGROUP -> throw DomainException.invalid("replication_source.volumegroup: csi4j replicates volumes, not volume groups");
                case VOLUMESNAPSHOT -> throw DomainException.invalid("replication_source.volumesnapshot: csi4j replicates volumes, not snapshots");
                case TYPE_NOT_SET -> throw DomainException.invalid("replication_source has none of volume, volumegroup, volumesnapshot");
            }
        }
        if (!fromSource.isEmpty() && !deprecated.isEmpty() && !fromSource.equals(deprecated)) {
            throw DomainException.invalid("volume_id '" + deprecated + "' and replication_source.volume.volume_id '" + fromSource + "' differ");
        }
        String id = fromSource.isEmpty() ? deprecated : fromSource;
        if (id.isEmpty()) throw DomainException.invalid("replication_source.volume.volume_id (or volume_id) is REQUIRED");
        return id;
    }
}
