package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.util.JsonFormat;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.addons.replication.ControllerGrpc;
import io.csi4j.proto.addons.replication.GetVolumeReplicationInfoRequest;
import io.csi4j.proto.addons.replication.GetVolumeReplicationInfoResponse;
import io.csi4j.proto.addons.replication.ResyncVolumeRequest;
import io.csi4j.proto.cluster.GetClusterStatusResponse;
import io.csi4j.proto.cluster.SecondaryStatus;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 28, observability across a restart, with real processes (two image-engine agents and a controller over mutual
 * TLS): after a round, the secondary's agent is killed and started again; {@code cluster status} and CSI-Addons
 * GetVolumeReplicationInfo give the same last round as before (from the {@code <volume>.round} file beside its
 * state), not "no round yet" / UNAVAILABLE. The interval is an hour, so no other round runs meanwhile.
 */
class ClusterRoundFiguresRestartTest {
    private static final List<String> NODES = List.of("node-a", "node-b");

    @TempDir
    static Path tmp;
    static ProcessCluster cluster;
    static ManagedChannel addons;

    @BeforeAll
    static void start() throws Exception {
        Privileged.requireRoot();
        cluster = ProcessCluster.start(tmp, NODES, List.of("--engine", "image", "--pool-size", "1G", "--copy-bandwidth", "64M"), List.of());
        addons = Channels.connect(Endpoint.parse("unix://" + tmp.resolve("controller").resolve("csi-addons.sock")));
    }

    @AfterAll
    static void stop() throws Exception {
        if (addons != null) addons.shutdownNow();
        if (cluster != null) cluster.close();
    }

    static ControllerGrpc.ControllerBlockingStub replication() {
        return ControllerGrpc.newBlockingStub(addons).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    static GetVolumeReplicationInfoResponse info(String id) {
        return replication().getVolumeReplicationInfo(GetVolumeReplicationInfoRequest.newBuilder().setVolumeId(id).build());
    }

    static SecondaryStatus secondaryStatus(String id) throws Exception {
        var run = ClusterStatusTest.cli("cluster", "status", "--endpoint", cluster.controllerSocket(), "-o", "json");
        assertEquals(0, run.exit(), run.err());
        var builder = GetClusterStatusResponse.newBuilder();
        JsonFormat.parser().merge(run.out(), builder);
        var volume = builder.getVolumesList().stream().filter(v -> v.getVolumeId().equals(id)).findFirst()
                .orElseThrow(() -> new AssertionError("no status of " + id + ": " + run.out()));
        assertEquals(1, volume.getSecondariesCount(), volume.toString());
        return volume.getSecondaries(0);
    }

    @Test
    void theLastRoundsFiguresSurviveTheSecondarysAgentRestart() throws Exception {
        var volume = ReplicaFixture.hourVolume(cluster, "round-figures");
        var csi = volume.csi();
        String id = volume.id();
        String secondary = volume.secondary();

        assertTrue(replication().resyncVolume(ResyncVolumeRequest.newBuilder().setVolumeId(id).build()).getReady());
        var before = info(id);
        var statusBefore = secondaryStatus(id);
        assertTrue(statusBefore.getHasRound() && statusBefore.getLastRoundMillis() > 0, statusBefore.toString());
        assertTrue(Files.exists(tmp.resolve(secondary).resolve("replication").resolve(id + ".round")), "the round's file on " + secondary);

        var agent = cluster.agent(secondary);
        agent.child.signal("KILL");
        agent.start();
        cluster.awaitEveryNode();

        var after = info(id);                                   // not UNAVAILABLE: the figures were kept
        assertEquals(before.getLastSyncTime(), after.getLastSyncTime());
        assertEquals(before.getLastSyncBytes(), after.getLastSyncBytes());
        assertEquals(before.getLastSyncDuration(), after.getLastSyncDuration());
        var statusAfter = secondaryStatus(id);
        assertTrue(statusAfter.getHasRound() && statusAfter.getState() != SecondaryStatus.State.NO_ROUND_YET, statusAfter.toString());
        assertEquals(statusBefore.getLastSyncUnixMillis(), statusAfter.getLastSyncUnixMillis());
        assertEquals(statusBefore.getLastRoundBytes(), statusAfter.getLastRoundBytes());
        assertEquals(statusBefore.getLastRoundMillis(), statusAfter.getLastRoundMillis());
        assertTrue(statusAfter.getLagMillis() >= statusBefore.getLagMillis(), "the lag still counts from the cut: " + statusAfter);
        System.out.printf("after the restart of %s: last round %d bytes in %d ms, lag %d ms%n", secondary,
                statusAfter.getLastRoundBytes(), statusAfter.getLastRoundMillis(), statusAfter.getLagMillis());

        csi.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        assertTrue(Files.notExists(tmp.resolve(secondary).resolve("replication").resolve(id + ".round")), "gone with the replica");
    }
}
