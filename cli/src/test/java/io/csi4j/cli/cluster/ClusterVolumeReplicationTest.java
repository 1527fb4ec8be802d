package io.csi4j.cli.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.addons.identity.Capability;
import io.csi4j.proto.addons.identity.GetCapabilitiesRequest;
import io.csi4j.proto.addons.identity.IdentityGrpc;
import io.csi4j.proto.addons.replication.ControllerGrpc;
import io.csi4j.proto.addons.replication.DemoteVolumeRequest;
import io.csi4j.proto.addons.replication.DisableVolumeReplicationRequest;
import io.csi4j.proto.addons.replication.EnableVolumeReplicationRequest;
import io.csi4j.proto.addons.replication.GetVolumeReplicationInfoRequest;
import io.csi4j.proto.addons.replication.GetVolumeReplicationInfoResponse;
import io.csi4j.proto.addons.replication.PromoteVolumeRequest;
import io.csi4j.proto.addons.replication.ReplicationSource;
import io.csi4j.proto.addons.replication.ResyncVolumeRequest;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
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
import java.time.Instant;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * CSI-Addons VolumeReplication (docs/replication.md, "CSI-Addons VolumeReplication") over the cluster controller's
 * real CSI-Addons socket: a controller and three image-engine agents as processes, mutual TLS on loopback (the set-up
 * of ClusterReplicationTest; the controller with {@code --failover-after 8s}). The volumes' interval is an hour, so every
 * round here is one the test asked for.
 */
class ClusterVolumeReplicationTest {
    static final long MIB = ReplicaFixture.MIB;
    static final int FAILOVER_AFTER_S = 8;

    static ReplicaFixture f;
    static ManagedChannel addons;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> {
        f = new ReplicaFixture(dir, List.of("--copy-bandwidth", "64M"), List.of("--failover-after", FAILOVER_AFTER_S + "s"));
        addons = Channels.connect(Endpoint.parse("unix://" + dir.resolve("controller").resolve("csi-addons.sock")));
        return f;
    });

    /** Before the cluster stops (an extension's afterAll runs after the class's @AfterAll). */
    @AfterAll
    static void closeAddons() {
        if (addons != null) addons.shutdownNow();
    }

    static ControllerGrpc.ControllerBlockingStub replication() {
        return ControllerGrpc.newBlockingStub(addons).withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    static ReplicationSource source(String id) {
        return ReplicationSource.newBuilder().setVolume(ReplicationSource.VolumeSource.newBuilder().setVolumeId(id)).build();
    }

    static CreateVolumeRequest.Builder volume(String name) {
        return CreateVolumeRequest.newBuilder().setName(name).addVolumeCapabilities(ReplicaFixture.ext4())
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(64 * MIB));
    }

    /** Published (controller) and staged on {@code node}: the staging mount. */
    static Path attach(String node, String id) throws Exception {
        f.controllerPublish(node, id);
        return f.stage(node, id);
    }

    static void detach(String node, String id) {
        f.unstageAndControllerUnpublish(node, id);
    }

    static Status.Code code(Runnable call) {
        return assertThrows(StatusRuntimeException.class, call::run).getStatus().getCode();
    }

    static Instant instant(com.google.protobuf.Timestamp t) {
        return Instant.ofEpochSecond(t.getSeconds(), t.getNanos());
    }

    @Test
    void theControllerAdvertisesVolumeReplication() {
        var caps = IdentityGrpc.newBlockingStub(addons).withDeadlineAfter(60, TimeUnit.SECONDS)
                .getCapabilities(GetCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList();
        assertTrue(caps.contains(Capability.newBuilder().setVolumeReplication(Capability.VolumeReplication.newBuilder()
                .setType(Capability.VolumeReplication.Type.VOLUME_REPLICATION)).build()), caps.toString());
    }

    @Test
    void infoResyncDemoteAndPromoteOfAReplicatedVolume() throws Exception {
        String id = f.csi().createVolume(volume("vr-life").putParameters("csi4j.io/replicas", "2")
                .putParameters("csi4j.io/replication-interval", "1h").build()).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String primary = parsed.tags().get(0);
        String secondary = parsed.tags().get(1);

        // enabled from its creation: OK, every time; disabling is refused (the replica set is fixed)
        replication().enableVolumeReplication(EnableVolumeReplicationRequest.newBuilder().setReplicationSource(source(id)).build());
        replication().enableVolumeReplication(EnableVolumeReplicationRequest.newBuilder().setVolumeId(id).build());
        assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> replication().disableVolumeReplication(
                DisableVolumeReplicationRequest.newBuilder().setReplicationSource(source(id)).build())));
        // no round yet: nothing to report, and the caller retries
        assertEquals(Status.Code.UNAVAILABLE, code(() -> replication().getVolumeReplicationInfo(
                GetVolumeReplicationInfoRequest.newBuilder().setReplicationSource(source(id)).build())));

        // 2 MiB of seeded data, fsynced through the mount on the primary
        byte[] data = new byte[(int) (2 * MIB)];
        new Random(28).nextBytes(data);
        Path staging = attach(primary, id);
        try (var ch = FileChannel.open(staging.resolve("data"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(data));
            ch.force(true);
        }
        // the primary is staged: it cannot step down (the pod would keep writing to a copy that is no longer served)
        assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> replication().demoteVolume(
                DemoteVolumeRequest.newBuilder().setReplicationSource(source(id)).setForce(true).build())));
        assertEquals("PRIMARY", f.role(primary, id));

        // Resync: a round now (the primary is staged: its point is cut frozen), then the round it did
        Instant before = Instant.now();
        assertTrue(replication().resyncVolume(ResyncVolumeRequest.newBuilder().setReplicationSource(source(id)).build()).getReady());
        GetVolumeReplicationInfoResponse info = replication().getVolumeReplicationInfo(
                GetVolumeReplicationInfoRequest.newBuilder().setReplicationSource(source(id)).build());
        Instant cut = instant(info.getLastSyncTime());
        assertTrue(!cut.isBefore(before.minusSeconds(1)) && !cut.isAfter(Instant.now()), "last_sync_time " + cut + " after " + before);
        assertTrue(info.getLastSyncBytes() >= data.length, "a first round copies at least the data: " + info.getLastSyncBytes());
        assertTrue(info.getLastSyncDuration().getSeconds() > 0 || info.getLastSyncDuration().getNanos() > 0, info.toString());
        System.out.printf("first round: %d bytes in %d.%09d s%n", info.getLastSyncBytes(), info.getLastSyncDuration().getSeconds(),
                info.getLastSyncDuration().getNanos());
        detach(primary, id);

        // a second resync is a delta against the point held: fewer bytes, a later point
        assertTrue(replication().resyncVolume(ResyncVolumeRequest.newBuilder().setVolumeId(id).build()).getReady());
        var again = replication().getVolumeReplicationInfo(GetVolumeReplicationInfoRequest.newBuilder().setVolumeId(id).build());
        assertTrue(instant(again.getLastSyncTime()).isAfter(cut), again.toString());
        assertTrue(again.getLastSyncBytes() < info.getLastSyncBytes(), "a delta: " + again.getLastSyncBytes() + " < " + info.getLastSyncBytes());

        // Demote, unpublished: the primary steps down towards the secondary; again: OK; a resync now is refused
        replication().demoteVolume(DemoteVolumeRequest.newBuilder().setReplicationSource(source(id)).build());
        assertEquals("SECONDARY", f.role(primary, id));
        replication().demoteVolume(DemoteVolumeRequest.newBuilder().setReplicationSource(source(id)).build());
        assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> replication().resyncVolume(
                ResyncVolumeRequest.newBuilder().setReplicationSource(source(id)).build())));

        // Promote finishes the handoff on the secondary with the final point: every byte is there; again: OK
        replication().promoteVolume(PromoteVolumeRequest.newBuilder().setReplicationSource(source(id)).build());
        assertEquals("PRIMARY", f.role(secondary, id));
        assertEquals("SECONDARY", f.role(primary, id));
        replication().promoteVolume(PromoteVolumeRequest.newBuilder().setReplicationSource(source(id)).setForce(true).build());
        assertEquals("PRIMARY", f.role(secondary, id));
        Path moved = attach(secondary, id);
        assertArrayEquals(data, Files.readAllBytes(moved.resolve("data")), "the data after Demote and Promote");
        detach(secondary, id);

        // the old primary follows the new one: a resync reaches it, and reports its round
        assertTrue(replication().resyncVolume(ResyncVolumeRequest.newBuilder().setReplicationSource(source(id)).build()).getReady());
        var after = replication().getVolumeReplicationInfo(GetVolumeReplicationInfoRequest.newBuilder().setReplicationSource(source(id)).build());
        assertTrue(instant(after.getLastSyncTime()).isAfter(instant(again.getLastSyncTime())), after.toString());

        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        assertEquals(Status.Code.NOT_FOUND, code(() -> replication().enableVolumeReplication(
                EnableVolumeReplicationRequest.newBuilder().setReplicationSource(source(id)).build())));
    }

    @Test
    void anOrdinaryVolumeIsRefusedClearly() {
        String id = f.csi().createVolume(volume("vr-plain").build()).getVolume().getVolumeId();
        var refused = assertThrows(StatusRuntimeException.class, () -> replication().enableVolumeReplication(
                EnableVolumeReplicationRequest.newBuilder().setReplicationSource(source(id)).build()));
        assertEquals(Status.Code.FAILED_PRECONDITION, refused.getStatus().getCode(), refused.getStatus().toString());
        assertTrue(refused.getStatus().getDescription().contains("not replicated"), refused.getStatus().toString());
        replication().disableVolumeReplication(DisableVolumeReplicationRequest.newBuilder().setReplicationSource(source(id)).build());
        assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> replication().promoteVolume(
                PromoteVolumeRequest.newBuilder().setReplicationSource(source(id)).setForce(true).build())));
        assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> replication().demoteVolume(
                DemoteVolumeRequest.newBuilder().setReplicationSource(source(id)).build())));
        assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> replication().resyncVolume(
                ResyncVolumeRequest.newBuilder().setReplicationSource(source(id)).build())));
        assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> replication().getVolumeReplicationInfo(
                GetVolumeReplicationInfoRequest.newBuilder().setReplicationSource(source(id)).build())));
        f.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
        // gone, or never ours: NOT_FOUND; no volume named: INVALID_ARGUMENT; a group: INVALID_ARGUMENT
        assertEquals(Status.Code.NOT_FOUND, code(() -> replication().enableVolumeReplication(
                EnableVolumeReplicationRequest.newBuilder().setReplicationSource(source(id)).build())));
        assertEquals(Status.Code.NOT_FOUND, code(() -> replication().disableVolumeReplication(
                DisableVolumeReplicationRequest.newBuilder().setVolumeId("no-such-volume").build())));
        assertEquals(Status.Code.INVALID_ARGUMENT, code(() -> replication().promoteVolume(PromoteVolumeRequest.getDefaultInstance())));
        assertEquals(Status.Code.INVALID_ARGUMENT, code(() -> replication().enableVolumeReplication(EnableVolumeReplicationRequest.newBuilder()
                .setReplicationSource(ReplicationSource.newBuilder().setVolumegroup(ReplicationSource.VolumeGroupSource.newBuilder()
                        .setVolumeGroupId("group-1"))).build())));
    }

    static void write(Path file, byte[] data) throws Exception {
        try (var ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            ch.write(ByteBuffer.wrap(data));
            ch.force(true);
        }
    }

    /** One round on {@code secondary} only (NodeAgent.SyncReplica over mutual TLS, as the scheduler would). */
    static void roundOn(String secondary, String primary, String id) {
        f.round(secondary, primary, id);
    }

    @Test
    void promoteWithForceFailsOverToTheFreshestSecondaryOnlyAfterTheDelay() throws Exception {
        String id = f.csi().createVolume(volume("vr-failover").putParameters("csi4j.io/replicas", "3")
                .putParameters("csi4j.io/replication-interval", "1h").build()).getVolume().getVolumeId();
        var parsed = ReplicatedVolumeId.parse(id).orElseThrow();
        String a = parsed.tags().get(0);
        String stale = parsed.tags().get(1);
        String fresh = parsed.tags().get(2);
        byte[] first = new byte[(int) MIB];
        byte[] second = new byte[(int) MIB];
        new Random(1).nextBytes(first);
        new Random(2).nextBytes(second);
        write(attach(a, id).resolve("data"), first);
        detach(a, id);
        assertTrue(replication().resyncVolume(ResyncVolumeRequest.newBuilder().setReplicationSource(source(id)).build()).getReady());
        write(attach(a, id).resolve("data"), second);
        detach(a, id);
        roundOn(fresh, a, id);                               // only this secondary holds the second write

        var agentA = f.cluster.agent(a);
        try {
            agentA.child.signal("KILL");
            long killed = System.nanoTime();
            var refused = assertThrows(StatusRuntimeException.class, () -> replication().promoteVolume(
                    PromoteVolumeRequest.newBuilder().setReplicationSource(source(id)).build()));
            assertEquals(Status.Code.UNAVAILABLE, refused.getStatus().getCode(), refused.getStatus().toString());
            assertTrue(refused.getStatus().getDescription().contains(a), refused.getStatus().toString());
            // with force: UNAVAILABLE until the node has been silent for --failover-after (bounded retries, as a CO)
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            int unavailable = 0;
            while (true) {
                try {
                    replication().promoteVolume(PromoteVolumeRequest.newBuilder().setReplicationSource(source(id)).setForce(true).build());
                    break;
                } catch (StatusRuntimeException e) {
                    if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() > deadline) throw e;
                    unavailable++;
                    Thread.sleep(1000);
                }
            }
            long waited = (System.nanoTime() - killed) / 1_000_000;
            System.out.printf("forced promote of %s: %d ms after the kill, %d UNAVAILABLE answers first%n", id, waited, unavailable);
            assertTrue(waited >= (FAILOVER_AFTER_S - 1) * 1000L, "not failed over before the delay: " + waited + " ms");
            assertEquals("PRIMARY", f.role(fresh, id), "the freshest secondary is promoted");
            assertEquals("SECONDARY", f.role(stale, id));
            Path moved = attach(fresh, id);
            assertArrayEquals(second, Files.readAllBytes(moved.resolve("data")), "the freshest point's data");
            detach(fresh, id);
            // promote again: a primary answers, nothing changes
            replication().promoteVolume(PromoteVolumeRequest.newBuilder().setReplicationSource(source(id)).setForce(true).build());
            assertEquals("PRIMARY", f.role(fresh, id));
        } finally {
            if (agentA.child == null || !agentA.child.alive()) {
                agentA.start();
                f.cluster.awaitEveryNode();
            }
        }
        // the old primary is back: fenced (by a routed call or the scheduler), then, nothing using its copy, a secondary of
        // the new epoch by itself (the scheduler's FollowReplica): a resync then says every copy follows the primary
        f.csi().controllerGetVolume(io.csi4j.proto.csi.ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build());
        assertTrue(List.of("FENCED", "SECONDARY").contains(f.role(a, id)), f.role(a, id));
        long bound = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!f.role(a, id).equals("SECONDARY")) {
            if (System.nanoTime() > bound) throw new AssertionError("the fenced copy on " + a + " never followed: " + f.role(a, id));
            Thread.sleep(200);
        }
        assertEquals(true, replication().resyncVolume(ResyncVolumeRequest.newBuilder().setReplicationSource(source(id)).build()).getReady());
    }
}
