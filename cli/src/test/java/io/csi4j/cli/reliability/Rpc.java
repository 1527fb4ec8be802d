package io.csi4j.cli.reliability;

import io.csi4j.proto.addons.volumegroup.ControllerGrpc.ControllerBlockingStub;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.GroupControllerGrpc;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.proto.csi.VolumeCapability;
import io.grpc.ManagedChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** Blocking stubs for one plugin process, each call with a deadline, every call counted. */
final class Rpc {
    static final AtomicLong REQUESTS = new AtomicLong();
    private final ControllerGrpc.ControllerBlockingStub controller;
    private final NodeGrpc.NodeBlockingStub node;
    private final GroupControllerGrpc.GroupControllerBlockingStub groups;
    private final ControllerBlockingStub volumeGroups;   // null when the plugin serves no CSI-Addons

    Rpc(ManagedChannel csi, ManagedChannel addons) {
        controller = ControllerGrpc.newBlockingStub(csi);
        node = NodeGrpc.newBlockingStub(csi);
        groups = GroupControllerGrpc.newBlockingStub(csi);
        volumeGroups = addons == null ? null : io.csi4j.proto.addons.volumegroup.ControllerGrpc.newBlockingStub(addons);
    }

    ControllerGrpc.ControllerBlockingStub controller() {
        REQUESTS.incrementAndGet();
        return controller.withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    NodeGrpc.NodeBlockingStub node() {
        REQUESTS.incrementAndGet();
        return node.withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    GroupControllerGrpc.GroupControllerBlockingStub groups() {
        REQUESTS.incrementAndGet();
        return groups.withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    boolean hasVolumeGroups() {
        return volumeGroups != null;
    }

    ControllerBlockingStub volumeGroups() {
        REQUESTS.incrementAndGet();
        return volumeGroups.withDeadlineAfter(120, TimeUnit.SECONDS);
    }

    static VolumeCapability mountXfs() {
        return VolumeCapability.newBuilder()
                .setMount(VolumeCapability.MountVolume.newBuilder().setFsType("xfs"))
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER))
                .build();
    }

    static CapacityRange atLeast(long bytes) {
        return CapacityRange.newBuilder().setRequiredBytes(bytes).build();
    }
}
