package io.csi4j.sdk.interceptor;

import static io.csi4j.sdk.testing.Requests.create;
import static io.csi4j.sdk.testing.Requests.waitUntil;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.CreateVolumeResponse;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.sdk.testing.Requests;
import io.csi4j.sdk.testing.TestPlugin;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InFlightGuardTest {
    @TempDir
    Path dir;

    private static CompletableFuture<CreateVolumeResponse> async(ManagedChannel channel, CreateVolumeRequest request) {
        return Requests.async(() -> ControllerGrpc.newBlockingStub(channel).createVolume(request));
    }

    private static Status statusOf(CompletableFuture<?> future) throws Exception {
        try {
            future.get(20, TimeUnit.SECONDS);
            return Status.OK;
        } catch (ExecutionException e) {
            return ((StatusRuntimeException) e.getCause()).getStatus();
        }
    }

    @Test
    void identicalConcurrentRequestsRunOnceAndShareTheAnswer() throws Exception {
        InFlightGuard guard = InFlightGuard.forCsi();
        try (TestPlugin plugin = TestPlugin.start(dir, b -> b.guard(guard))) {
            CreateVolumeRequest request = create("pvc-same", "slow_ms", "700");
            var first = async(plugin.channel(), request);
            waitUntil(() -> plugin.controller.createInvocations.get() == 1);
            var second = async(plugin.channel(), request);
            var third = async(plugin.channel(), request);
            assertEquals(Set.of("volume name pvc-same"), guard.busyKeys());
            CreateVolumeResponse a = first.get(10, TimeUnit.SECONDS);
            assertEquals(a, second.get(10, TimeUnit.SECONDS));
            assertEquals(a, third.get(10, TimeUnit.SECONDS));
            assertEquals(1, plugin.controller.createInvocations.get(), "the service ran once for three calls");
            assertEquals(Set.of(), guard.busyKeys());
        }
    }

    @Test
    void identicalRequestsShareAnErrorToo() throws Exception {
        try (TestPlugin plugin = TestPlugin.start(dir)) {
            CreateVolumeRequest request = create("pvc-doomed", "slow_ms", "500", "fail", "yes");
            var first = async(plugin.channel(), request);
            waitUntil(() -> plugin.controller.createInvocations.get() == 1);
            var second = async(plugin.channel(), request);
            Status a = statusOf(first);
            Status b = statusOf(second);
            assertEquals(Status.Code.INTERNAL, a.getCode());
            assertEquals(a.getCode(), b.getCode());
            assertEquals(a.getDescription(), b.getDescription(), "the same answer, reference included");
            assertEquals(1, plugin.controller.createInvocations.get());
        }
    }

    @Test
    void aDifferentRequestOnABusyObjectIsAborted() throws Exception {
        try (TestPlugin plugin = TestPlugin.start(dir)) {
            var slow = async(plugin.channel(), create("pvc-busy", "slow_ms", "800"));
            waitUntil(() -> plugin.controller.createInvocations.get() == 1);
            var controller = ControllerGrpc.newBlockingStub(plugin.channel());
            var e = assertThrows(StatusRuntimeException.class, () -> controller.createVolume(create("pvc-busy", "other", "params")));
            assertEquals(Status.Code.ABORTED, e.getStatus().getCode());
            assertEquals("CreateVolume: an operation is pending for volume name pvc-busy (CreateVolume); retry later",
                    e.getStatus().getDescription());
            // another object is not affected
            assertTrue(controller.createVolume(create("pvc-other")).hasVolume());
            assertTrue(slow.get(10, TimeUnit.SECONDS).hasVolume());
            assertEquals(3 - 1, plugin.controller.createInvocations.get(), "the aborted call never ran");
        }
    }

    @Test
    void differentObjectsRunInParallel() throws Exception {
        try (TestPlugin plugin = TestPlugin.start(dir)) {
            long start = System.nanoTime();
            List<CompletableFuture<CreateVolumeResponse>> calls = List.of(
                    async(plugin.channel(), create("p-1", "slow_ms", "1000")),
                    async(plugin.channel(), create("p-2", "slow_ms", "1000")),
                    async(plugin.channel(), create("p-3", "slow_ms", "1000")));
            for (var call : calls) assertTrue(call.get(10, TimeUnit.SECONDS).hasVolume());
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(ms < 2500, "three 1 s calls on different volumes took " + ms + " ms (3 s if serialized)");
        }
    }

    @Test
    void keysAreReleasedAfterAnException() throws Exception {
        try (TestPlugin plugin = TestPlugin.start(dir)) {
            var controller = ControllerGrpc.newBlockingStub(plugin.channel());
            var e = assertThrows(StatusRuntimeException.class, () -> controller.createVolume(create("pvc-x", "fail", "yes")));
            assertEquals(Status.Code.INTERNAL, e.getStatus().getCode());
            assertTrue(controller.createVolume(create("pvc-x")).hasVolume(), "the name is free again at once");
        }
    }

    @Test
    void keysAreReleasedWhenTheClientCancels() throws Exception {
        for (boolean quiet : new boolean[] {false, true}) {
            try (TestPlugin plugin = TestPlugin.start(dir.resolve(quiet ? "quiet" : "loud"))) {
                var controller = ControllerGrpc.newBlockingStub(plugin.channel());
                CreateVolumeRequest slow = quiet ? create("pvc-c", "slow_ms", "60000", "quiet_cancel", "yes")
                        : create("pvc-c", "slow_ms", "60000");
                var e = assertThrows(StatusRuntimeException.class, () ->
                        controller.withDeadlineAfter(300, TimeUnit.MILLISECONDS).createVolume(slow));
                assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode());
                waitUntil(() -> plugin.controller.cancelsObserved.get() == 1);
                // the cancel reaches the guard right after the service returns; give it that moment
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                CreateVolumeResponse response = null;
                while (response == null) {
                    try {
                        response = controller.createVolume(create("pvc-c"));
                    } catch (StatusRuntimeException busy) {
                        assertEquals(Status.Code.ABORTED, busy.getStatus().getCode());
                        assertTrue(System.nanoTime() < deadline, "key never released after cancel (quiet=" + quiet + ")");
                        Thread.sleep(10);
                    }
                }
                assertTrue(response.hasVolume());
            }
        }
    }

    @Test
    void aVolumeGroupModifyLocksTheGroupAndEveryMemberVolume() throws Exception {
        var groups = new io.csi4j.proto.addons.volumegroup.ControllerGrpc.ControllerImplBase() {
            @Override
            public void modifyVolumeGroupMembership(io.csi4j.proto.addons.volumegroup.ModifyVolumeGroupMembershipRequest request,
                    io.grpc.stub.StreamObserver<io.csi4j.proto.addons.volumegroup.ModifyVolumeGroupMembershipResponse> response) {
                try {
                    Thread.sleep(800);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                response.onNext(io.csi4j.proto.addons.volumegroup.ModifyVolumeGroupMembershipResponse.newBuilder()
                        .setVolumeGroup(io.csi4j.proto.addons.volumegroup.VolumeGroup.newBuilder().setVolumeGroupId(request.getVolumeGroupId()))
                        .build());
                response.onCompleted();
            }
        };
        InFlightGuard guard = InFlightGuard.forCsi();
        try (TestPlugin plugin = TestPlugin.start(dir, b -> b.guard(guard).listen(
                new io.csi4j.sdk.server.Endpoint.Unix(dir.resolve("addons.sock")), groups))) {
            var modify = io.csi4j.proto.addons.volumegroup.ModifyVolumeGroupMembershipRequest.newBuilder()
                    .setVolumeGroupId("g-1").addVolumeIds("vol-7").addVolumeIds("vol-8").build();
            var addonsChannel = plugin.channel(new io.csi4j.sdk.server.Endpoint.Unix(dir.resolve("addons.sock")));
            var pending = Requests.async(() -> io.csi4j.proto.addons.volumegroup.ControllerGrpc.newBlockingStub(addonsChannel)
                    .modifyVolumeGroupMembership(modify));
            waitUntil(() -> guard.busyKeys().size() == 3);
            assertEquals(Set.of("volume group g-1", "volume vol-7", "volume vol-8"), guard.busyKeys());
            var e = assertThrows(StatusRuntimeException.class, () -> ControllerGrpc.newBlockingStub(plugin.channel())
                    .deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId("vol-8").build()));
            assertEquals("DeleteVolume: an operation is pending for volume vol-8 (ModifyVolumeGroupMembership); retry later",
                    e.getStatus().getDescription());
            assertEquals("g-1", pending.get(10, TimeUnit.SECONDS).getVolumeGroup().getVolumeGroupId());
            assertEquals(Set.of(), guard.busyKeys());
        }
    }

    @Test
    void aVolumeGroupCreateLocksItsNameAndTheVolumesItGroups() throws Exception {
        var groups = new io.csi4j.proto.addons.volumegroup.ControllerGrpc.ControllerImplBase() {
            @Override
            public void createVolumeGroup(io.csi4j.proto.addons.volumegroup.CreateVolumeGroupRequest request,
                    io.grpc.stub.StreamObserver<io.csi4j.proto.addons.volumegroup.CreateVolumeGroupResponse> response) {
                try {
                    Thread.sleep(800);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                response.onNext(io.csi4j.proto.addons.volumegroup.CreateVolumeGroupResponse.newBuilder()
                        .setVolumeGroup(io.csi4j.proto.addons.volumegroup.VolumeGroup.newBuilder().setVolumeGroupId("g-" + request.getName()))
                        .build());
                response.onCompleted();
            }
        };
        InFlightGuard guard = InFlightGuard.forCsi();
        try (TestPlugin plugin = TestPlugin.start(dir, b -> b.guard(guard).listen(
                new io.csi4j.sdk.server.Endpoint.Unix(dir.resolve("addons.sock")), groups))) {
            var create = io.csi4j.proto.addons.volumegroup.CreateVolumeGroupRequest.newBuilder()
                    .setName("app").addVolumeIds("vol-7").addVolumeIds("vol-8").addVolumeIds("vol-7").build();
            var addonsChannel = plugin.channel(new io.csi4j.sdk.server.Endpoint.Unix(dir.resolve("addons.sock")));
            var pending = Requests.async(() -> io.csi4j.proto.addons.volumegroup.ControllerGrpc.newBlockingStub(addonsChannel)
                    .createVolumeGroup(create));
            waitUntil(() -> guard.busyKeys().size() == 3);
            assertEquals(Set.of("volume group name app", "volume vol-7", "volume vol-8"), guard.busyKeys());
            var e = assertThrows(StatusRuntimeException.class, () -> ControllerGrpc.newBlockingStub(plugin.channel())
                    .deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId("vol-7").build()));
            assertEquals(Status.Code.ABORTED, e.getStatus().getCode());
            assertEquals("g-app", pending.get(10, TimeUnit.SECONDS).getVolumeGroup().getVolumeGroupId());
            assertEquals(Set.of(), guard.busyKeys());
        }
    }

    @Test
    void driverAuthorsBringTheirOwnKeys() throws Exception {
        // a driver whose volume ids embed a pool: one operation per pool
        InFlightGuard perPool = InFlightGuard.builder()
                .key(ControllerGrpc.getCreateVolumeMethod(), (CreateVolumeRequest r) -> List.of("pool " + r.getParametersOrDefault("pool", "default")))
                .key(ControllerGrpc.getDeleteVolumeMethod(), (DeleteVolumeRequest r) -> List.of("pool " + r.getVolumeId().split("/")[0]))
                .build();
        try (TestPlugin plugin = TestPlugin.start(dir, b -> b.guard(perPool))) {
            var slow = async(plugin.channel(), create("a", "slow_ms", "800", "pool", "fast"));
            waitUntil(() -> plugin.controller.createInvocations.get() == 1);
            var controller = ControllerGrpc.newBlockingStub(plugin.channel());
            var e = assertThrows(StatusRuntimeException.class, () -> controller.createVolume(create("b", "pool", "fast")));
            assertEquals("CreateVolume: an operation is pending for pool fast (CreateVolume); retry later", e.getStatus().getDescription());
            var d = assertThrows(StatusRuntimeException.class, () -> controller.deleteVolume(
                    DeleteVolumeRequest.newBuilder().setVolumeId("fast/vol-9").build()));
            assertEquals(Status.Code.ABORTED, d.getStatus().getCode());
            assertTrue(perPool.busyKeys().contains("pool fast"));
            assertTrue(controller.createVolume(create("c", "pool", "slow")).hasVolume());
            assertTrue(slow.get(10, TimeUnit.SECONDS).hasVolume());
            assertEquals(Set.of(), perPool.busyKeys());
        }
    }
}
