package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.cluster.ListCopiesRequest;
import io.csi4j.proto.cluster.SyncReplicaResponse;
import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A read-only NodeStageVolume of a secondary's copy in the middle of a replication round, with real processes (a
 * controller and three image-engine agents over mutual TLS, a 16 MiB delta at 4 MiB/s as in ClusterReplicaKillTest):
 * the round must not rename its new image under the mount (it did: the mount stayed on the unlinked old image, which no
 * later in-use check saw). It answers FAILED_PRECONDITION, the copy keeps the point it held and the mount serves it; once
 * unstaged, the next round is a delta against that point and nothing is left (docs/replication.md, "A round").
 */
class ClusterStageDuringRoundTest {
    static final long MIB = ReplicaFixture.MIB;
    static final int RECORD = ClusterReplicaKillTest.RECORD;

    @TempDir
    static Path tmp;
    static ReplicaFixture f;
    static final Map<String, ManagedChannel> NODE_CHANNELS = new HashMap<>();

    @BeforeAll
    static void start() throws Exception {
        Privileged.requireRoot();
        f = new ReplicaFixture(tmp, List.of("--copy-bandwidth", "4M"), List.of());
    }

    @AfterAll
    static void stop() throws Exception {
        NODE_CHANNELS.values().forEach(ManagedChannel::shutdownNow);
        if (f != null) f.close();
    }

    static NodeGrpc.NodeBlockingStub node(String nodeId) {
        var channel = NODE_CHANNELS.computeIfAbsent(nodeId, id -> Channels.connect(Endpoint.parse("unix://" + tmp.resolve(id).resolve("csi.sock"))));
        return NodeGrpc.newBlockingStub(channel).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    static VolumeCapability readOnly() {
        return ReplicaFixture.ext4().toBuilder().setAccessMode(VolumeCapability.AccessMode.newBuilder()
                .setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_READER_ONLY)).build();
    }

    @Test
    void aReadOnlyStageOfTheSecondaryMidRoundKeepsItsPointAndTheRoundRefuses() throws Exception {
        String id = f.csi().createVolume(ReplicaFixture.replicated("stage-mid-round", 2, 128 * MIB)).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0), b = parsed.tags().get(1);
        Path staging = Files.createDirectories(tmp.resolve("staging-" + b).resolve(id));
        boolean staged = false;
        try {
            writeOnPrimary(a, id, 0, 6 * 1024);                                   // 24 MiB
            SyncReplicaResponse first = f.round(b, a, id);
            writeOnPrimary(a, id, 6 * 1024, 10 * 1024);                           // 16 MiB more: the next round's delta

            var round = CompletableFuture.supplyAsync(() -> f.round(b, a, id));
            awaitMidRound(b, id, round);
            node(b).nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                    .setVolumeCapability(readOnly()).build());
            staged = true;
            var failed = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, () -> round.get(120, TimeUnit.SECONDS),
                    "the round renamed its image under the read-only stage");
            var status = Status.fromThrowable(failed.getCause());
            assertEquals(Status.Code.FAILED_PRECONDITION, status.getCode(), status.toString());
            System.out.printf("round of %s on %s with a read-only stage landing mid-round: %s%n", id, b, status);

            assertEquals(first.getPoint(), f.point(b, id), "the copy still holds the point it held");
            assertEquals(6 * 1024, records(staging.resolve("records")), "the stage serves that point's records");
            var loops = ReplicaFixture.loops(id).stream().filter(l -> l.contains(f.dataDir(b).toString())).toList();
            assertEquals(1, loops.size(), loops.toString());
            assertTrue(!loops.getFirst().contains("(deleted)"), "the mount is on the volume's image: " + loops);
            assertEquals(List.of(), f.tmpFiles(b), ".tmp of " + b);

            node(b).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
            staged = false;
            SyncReplicaResponse next = f.round(b, a, id);
            assertEquals(first.getPoint(), next.getBasePoint(), "a delta against the point held: " + next);
            assertTrue(next.getBytesReceived() > 0 && next.getBytesReceived() < first.getBytesReceived(), next.toString());
            assertEquals(List.of(), ReplicaFixture.loops(id).stream().filter(l -> l.contains(f.dataDir(b).toString())).toList());
        } finally {
            if (staged) {
                node(b).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
            }
        }
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        assertEquals(List.of(), ReplicaFixture.loops(id));
    }

    /** Records written in order from the start of the file until the first that does not check. */
    static int records(Path file) throws Exception {
        byte[] all = Files.readAllBytes(file);
        int n = 0;
        while ((long) (n + 1) * RECORD <= all.length
                && java.util.Arrays.equals(ClusterReplicaKillTest.record(n), 0, RECORD, all, n * RECORD, (n + 1) * RECORD)) n++;
        return n;
    }

    /** Published and staged on the primary: records {@code from..to-1} written and fsynced, then unpublished and unstaged. */
    static void writeOnPrimary(String primary, String id, int from, int to) throws Exception {
        f.csi().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(primary)
                .setVolumeCapability(ReplicaFixture.ext4()).build());
        Path staging = Files.createDirectories(tmp.resolve("staging-" + primary).resolve(id));
        Path target = tmp.resolve("target-" + primary).resolve(id);
        Files.createDirectories(target.getParent());
        node(primary).nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setVolumeCapability(ReplicaFixture.ext4()).build());
        try {
            node(primary).nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                    .setTargetPath(target.toString()).setVolumeCapability(ReplicaFixture.ext4()).build());
            try (var ch = FileChannel.open(target.resolve("records"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                for (int seq = from; seq < to; seq++) {
                    ch.write(ByteBuffer.wrap(ClusterReplicaKillTest.record(seq)), (long) seq * RECORD);
                    if (seq % 256 == 255) ch.force(true);
                }
                ch.force(true);
            }
        } finally {
            node(primary).nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target.toString()).build());
            node(primary).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
            f.csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(primary).build());
        }
    }

    /** Waits (bounded) until a quarter of the round's delta arrived on the secondary, and 2 MiB are still to come. */
    static void awaitMidRound(String secondary, String id, CompletableFuture<?> round) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String seen = "nothing";
        while (System.nanoTime() < deadline) {
            if (round.isDone()) throw new AssertionError("the round of " + id + " ended before its middle was seen (last seen: " + seen + ")");
            try {
                for (var c : f.agent(secondary).withDeadlineAfter(5, TimeUnit.SECONDS).listCopies(ListCopiesRequest.getDefaultInstance()).getCopiesList()) {
                    seen = c.getName() + " " + c.getBytesDone() + "/" + c.getBytesTotal();
                    if (c.getIncoming() && c.getName().contains(id) && c.getBytesTotal() > 0 && c.getBytesDone() >= c.getBytesTotal() / 4
                            && c.getBytesDone() <= c.getBytesTotal() - 2 * MIB) {
                        System.out.printf("in the middle of a round of %s on %s: %d of %d bytes%n", id, secondary, c.getBytesDone(), c.getBytesTotal());
                        return;
                    }
                }
            } catch (StatusRuntimeException e) {
                // busy: ask again
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no round of " + id + " seen in its middle on " + secondary + " within 60 s; last seen: " + seen);
    }
}
