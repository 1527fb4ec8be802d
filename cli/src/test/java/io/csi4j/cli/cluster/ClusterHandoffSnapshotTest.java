package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterReplicationTest.ext4;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 28: CreateSnapshot of a replicated volume while a handoff runs, with real processes (two image-engine agents
 * whose copies are limited to 2 MiB/s, so the handoff's final pull of 24 MiB takes seconds, and a controller). Every
 * CreateSnapshot meanwhile is either OK, on the old primary before it stepped down, or UNAVAILABLE (retry), never
 * NOT_FOUND nor a snapshot of a copy that is not the primary; after the handoff the retry is taken by the new primary.
 */
class ClusterHandoffSnapshotTest {
    private static final List<String> NODES = List.of("node-a", "node-b");
    private static final long MIB = 1L << 20;

    @TempDir
    static Path tmp;
    static ProcessCluster cluster;
    static final List<ManagedChannel> CHANNELS = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        Privileged.requireRoot();
        cluster = ProcessCluster.start(tmp, NODES, List.of("--engine", "image", "--pool-size", "1G", "--copy-bandwidth", "2M"), List.of());
    }

    @AfterAll
    static void stop() throws Exception {
        CHANNELS.forEach(ManagedChannel::shutdownNow);
        if (cluster != null) cluster.close();
    }

    static ControllerGrpc.ControllerBlockingStub csi() {
        return ControllerGrpc.newBlockingStub(cluster.controllerChannel()).withDeadlineAfter(180, TimeUnit.SECONDS);
    }

    static NodeGrpc.NodeBlockingStub node(String nodeId) {
        var channel = Channels.connect(Endpoint.parse("unix://" + tmp.resolve(nodeId).resolve("csi.sock")));
        CHANNELS.add(channel);
        return NodeGrpc.newBlockingStub(channel).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    @Test
    void aSnapshotDuringAHandoffIsOfThePrimaryOrUnavailable() throws Exception {
        String id = csi().createVolume(ClusterReplicationTest.replicated("handoff-snap", 2, "24h").build()).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0);
        String b = parsed.tags().get(1);

        // 24 MiB of data on A, none of it pulled yet: the handoff's final pull carries it at 2 MiB/s
        csi().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(a).setVolumeCapability(ext4()).build());
        Path staging = Files.createDirectories(tmp.resolve("staging-" + a).resolve(id));
        Path target = Files.createDirectories(tmp.resolve("target-" + a)).resolve(id);
        node(a).nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setVolumeCapability(ext4()).build());
        node(a).nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(ext4()).build());
        try {
            byte[] data = new byte[(int) (24 * MIB)];
            new Random(2).nextBytes(data);
            try (var ch = FileChannel.open(target.resolve("data"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(data));
                ch.force(true);
            }
        } finally {
            node(a).nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target.toString()).build());
            node(a).nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build());
        }
        csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(a).build());

        long started = System.nanoTime();
        var handoff = CompletableFuture.runAsync(() -> csi().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder()
                .setVolumeId(id).setNodeId(b).setVolumeCapability(ext4()).build()));
        // outcomes in order: OK on A (before its step-down), then UNAVAILABLE, then OK on B (once promoted), never back
        StringBuilder seen = new StringBuilder();
        while (!handoff.isDone() && System.nanoTime() - started < TimeUnit.SECONDS.toNanos(150)) {
            try {
                var snap = csi().createSnapshot(CreateSnapshotRequest.newBuilder().setSourceVolumeId(id).setName("during-" + seen.length()).build());
                String owner = ObjectId.parse(ObjectId.Kind.SNAPSHOT, snap.getSnapshot().getSnapshotId()).orElseThrow().nodeTag();
                assertTrue(owner.equals(ObjectId.nodeTag(a)) || owner.equals(ObjectId.nodeTag(b)), owner);
                seen.append(owner.equals(ObjectId.nodeTag(a)) ? 'A' : 'B');
            } catch (StatusRuntimeException e) {
                assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), "while the handoff runs: " + e.getStatus());
                seen.append('U');
            }
            Thread.sleep(250);
        }
        handoff.get(30, TimeUnit.SECONDS);
        long tookMs = (System.nanoTime() - started) / 1_000_000;
        System.out.printf("handoff of %s to %s took %d ms; CreateSnapshot meanwhile (A: OK on %s, U: UNAVAILABLE, B: OK on %s): %s%n",
                id, b, tookMs, a, b, seen);
        assertTrue(seen.toString().matches("A*U+B*"), "OK on the old primary, then UNAVAILABLE, then OK on the new one: " + seen);

        var after = csi().createSnapshot(CreateSnapshotRequest.newBuilder().setSourceVolumeId(id).setName("after").build());
        assertEquals(ObjectId.nodeTag(b), ObjectId.parse(ObjectId.Kind.SNAPSHOT, after.getSnapshot().getSnapshotId()).orElseThrow().nodeTag(),
                "after the handoff the new primary takes it");
        assertTrue(after.getSnapshot().getReadyToUse());
        csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(b).build());
    }
}
