package io.csi4j.cli;

import io.csi4j.proto.csi.*;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The workload of {@code csi4j serve --aot-training}: the launcher runs it once per build with
 * {@code -XX:AOTCacheOutput}, so that the classes (and profiles) a served call needs come from the
 * JDK's AOT cache at every later start instead of being loaded, verified and linked from the jars.
 * Only calls that need neither root nor loop devices, so training works anywhere the build does.
 */
public final class AotTraining {
    private static final int ROUNDS = 30;

    private AotTraining() {}

    /**
     * Runs {@link #exercise} in a JVM of its own, so that the cache made from the serving JVM holds what a plugin
     * loads and nothing a client does: every archived class is mapped and loaded at each start, and client classes
     * would be ~10 MiB of idle memory for nothing.
     */
    static void exerciseFromAnotherProcess(Endpoint csi, Endpoint addons) throws Exception {
        String javaCommand = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
        var command = new ArrayList<>(List.of(javaCommand, "--sun-misc-unsafe-memory-access=allow",
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), AotTraining.class.getName(),
                csi.uri()));
        if (addons != null) command.add(addons.uri());
        Process client = new ProcessBuilder(command).inheritIO().start();
        if (!client.waitFor(5, TimeUnit.MINUTES)) {
            client.destroyForcibly();
            throw new IllegalStateException("AOT training client did not finish in 5 minutes");
        }
        if (client.exitValue() != 0) throw new IllegalStateException("AOT training client exited " + client.exitValue());
    }

    /** The client side of the training: {@code AotTraining CSI_ENDPOINT [ADDONS_ENDPOINT]}. */
    public static void main(String[] args) throws InterruptedException {
        exercise(Endpoint.parse(args[0]), args.length > 1 ? Endpoint.parse(args[1]) : null);
    }

    static void exercise(Endpoint csi, Endpoint addons) throws InterruptedException {
        ManagedChannel channel = Channels.connect(csi);
        ManagedChannel addonsChannel = addons == null ? null : Channels.connect(addons);
        try {
            var identity = IdentityGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
            var controller = ControllerGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
            var node = NodeGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
            identity.getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
            identity.getPluginCapabilities(GetPluginCapabilitiesRequest.getDefaultInstance());
            controller.controllerGetCapabilities(ControllerGetCapabilitiesRequest.getDefaultInstance());
            node.nodeGetCapabilities(NodeGetCapabilitiesRequest.getDefaultInstance());
            node.nodeGetInfo(NodeGetInfoRequest.getDefaultInstance());
            if (addonsChannel != null) {
                io.csi4j.proto.addons.identity.IdentityGrpc.newBlockingStub(addonsChannel)
                        .withDeadlineAfter(60, TimeUnit.SECONDS)
                        .probe(io.csi4j.proto.addons.identity.ProbeRequest.getDefaultInstance());
            }
            VolumeCapability mount = VolumeCapability.newBuilder()
                    .setMount(VolumeCapability.MountVolume.newBuilder().setFsType("ext4"))
                    .setAccessMode(VolumeCapability.AccessMode.newBuilder()
                            .setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER))
                    .build();
            for (int round = 0; round < ROUNDS; round++) {
                identity.probe(ProbeRequest.getDefaultInstance());
                Volume v = controller.createVolume(CreateVolumeRequest.newBuilder().setName("aot-training-" + round)
                        .addVolumeCapabilities(mount)
                        .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(1 << 20))
                        .build()).getVolume();
                controller.listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(10).build());
                controller.controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).build());
                controller.getCapacity(GetCapacityRequest.newBuilder().addVolumeCapabilities(mount).build());
                Snapshot s = controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("aot-training-snap-" + round)
                        .setSourceVolumeId(v.getVolumeId()).build()).getSnapshot();
                controller.listSnapshots(ListSnapshotsRequest.newBuilder().setMaxEntries(10).build());
                controller.deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(s.getSnapshotId()).build());
                controller.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).build());
                try {
                    controller.deleteSnapshot(DeleteSnapshotRequest.getDefaultInstance());  // the error path too
                } catch (StatusRuntimeException expected) {
                    // INVALID_ARGUMENT: snapshot_id is required
                }
            }
        } finally {
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            if (addonsChannel != null) addonsChannel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }
}
