package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.SyncReplicaResponse;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.proto.csi.VolumeCapability;
import io.grpc.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A read-only NodeStageVolume of a secondary's copy in the middle of a replication round, with real processes (a
 * controller and three image-engine agents over mutual TLS, a 16 MiB delta at 4 MiB/s as in ClusterReplicaKillTest):
 * the round must not rename its new image under the mount (it did: the mount stayed on the unlinked old image, which no
 * later in-use check saw). It answers FAILED_PRECONDITION, the copy keeps the point it held and the mount serves it; once
 * unstaged, the next round is a delta against that point and nothing is left (docs/replication.md, "A round").
 */
class ClusterStageDuringRoundTest {
    static final long MIB = ReplicaFixture.MIB;

    static ReplicaFixture f;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> f = new ReplicaFixture(dir, List.of("--copy-bandwidth", "4M"), List.of()));

    static VolumeCapability readOnly() {
        return ReplicaFixture.ext4().toBuilder().setAccessMode(VolumeCapability.AccessMode.newBuilder()
                .setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_READER_ONLY)).build();
    }

    @Test
    void aReadOnlyStageOfTheSecondaryMidRoundKeepsItsPointAndTheRoundRefuses() throws Exception {
        String id = f.csi().createVolume(ReplicaFixture.replicated("stage-mid-round", 2, 128 * MIB)).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0), b = parsed.tags().get(1);
        Path staging = Files.createDirectories(f.tmp.resolve("staging-" + b).resolve(id));
        boolean staged = false;
        try {
            f.writeOnPrimary(a, id, 0, 6 * 1024);                                   // 24 MiB
            SyncReplicaResponse first = f.round(b, a, id);
            f.writeOnPrimary(a, id, 6 * 1024, 10 * 1024);                           // 16 MiB more: the next round's delta

            var round = CompletableFuture.supplyAsync(() -> f.round(b, a, id));
            f.awaitMidRound(b, id, round);
            f.node(b).nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                    .setVolumeCapability(readOnly()).build());
            staged = true;
            var failed = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, () -> round.get(120, TimeUnit.SECONDS),
                    "the round renamed its image under the read-only stage");
            var status = Status.fromThrowable(failed.getCause());
            assertEquals(Status.Code.FAILED_PRECONDITION, status.getCode(), status.toString());
            System.out.printf("round of %s on %s with a read-only stage landing mid-round: %s%n", id, b, status);

            assertEquals(first.getPoint(), f.point(b, id), "the copy still holds the point it held");
            assertEquals(6 * 1024, ReplicaFixture.records(staging.resolve("records")), "the stage serves that point's records");
            var loops = ReplicaFixture.loops(id).stream().filter(l -> l.contains(f.dataDir(b).toString())).toList();
            assertEquals(1, loops.size(), loops.toString());
            assertTrue(!loops.getFirst().contains("(deleted)"), "the mount is on the volume's image: " + loops);
            assertEquals(List.of(), f.tmpFiles(b), ".tmp of " + b);

            f.node(b).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
            staged = false;
            SyncReplicaResponse next = f.round(b, a, id);
            assertEquals(first.getPoint(), next.getBasePoint(), "a delta against the point held: " + next);
            assertTrue(next.getBytesReceived() > 0 && next.getBytesReceived() < first.getBytesReceived(), next.toString());
            assertEquals(List.of(), ReplicaFixture.loops(id).stream().filter(l -> l.contains(f.dataDir(b).toString())).toList());
        } finally {
            if (staged) {
                f.node(b).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
            }
        }
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        assertEquals(List.of(), ReplicaFixture.loops(id));
    }
}
